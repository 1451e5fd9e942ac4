"""How each `edge admin <kind> <verb>` is declared: its help line, an example under
`--help`, the data-folder flags, `--org` where the kind lives in an organization, and
`--json` where it prints something a script reads. Its handler rides on the parser
(`args.handler`), so the parser of a resource sits beside the code that runs it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Literal

from edge.kernel.config import Config

Handler = Callable[[argparse.Namespace, Config], int]
Flags = Callable[[argparse.ArgumentParser], None]  # the data folder and log level flags
Org = Literal["required", "optional", "none"]
ORG_HELP = "the organization (or project): its ID or alias"


def kind(sub: Any, name: str, text: str) -> Any:
    """`edge admin <name>`: the parser its verbs are added to."""
    parser = sub.add_parser(name, help=text, description=text)
    return parser.add_subparsers(dest="verb", required=True, metavar="VERB")


def verb(
    verbs: Any,
    name: str,
    text: str,
    example: str,
    handler: Handler,
    flags: Flags,
    *,
    org: Org = "required",
    json: bool = True,
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = verbs.add_parser(
        name,
        help=text,
        description=text,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    flags(parser)
    if org != "none":
        parser.add_argument("--org", required=org == "required", help=ORG_HELP)
    if json:
        parser.add_argument(
            "--json", action="store_true", help="one JSON document: the HTTP interface's body"
        )
    parser.set_defaults(handler=handler)
    return parser
