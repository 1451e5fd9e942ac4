"""`edge admin ...`: the everyday administration of a site from its own shell, on a stopped
site or beside a running server (docs/operating.md, "Everyday administration from the
command line").

One service layer: every command calls the services the HTTP handlers call, with the same
arguments, as the operator (operator.py), so the same rules, the same validation messages
and the same audit events apply. Passwords and keys never come from the command line.

- orgs.py: orgs list|create|show (and create-org);
- users.py: users list|create|show|suspend|resume|reset|unlock (and reset-password, unlock);
- groups.py: groups list|create|show|suspend|resume;
- devices.py: devices list|create|show|suspend|resume|reset;
- kinds.py: what users, groups and devices share; pages.py: listing; output.py: tables,
  JSON and secrets; verbs.py: how a verb's parser is declared.
"""

from __future__ import annotations

import argparse
from typing import Any

from edge.kernel.config import Config
from edge.shell.admin import devices, groups, orgs, users
from edge.shell.admin.verbs import Flags


def add_parser(sub: Any, flags: Flags) -> None:
    admin = sub.add_parser(
        "admin",
        help="administration: orgs, users, groups, devices (docs/operating.md)",
        epilog="each command's --help shows an example, e.g. edge admin users create --help",
    )
    kinds = admin.add_subparsers(dest="admin_command", required=True)
    for module in (orgs, users, groups, devices):
        module.add(kinds, flags)
    orgs.add_old_name(kinds, flags)
    users.add_old_names(kinds, flags)


def run(args: argparse.Namespace, config: Config) -> int:
    return int(args.handler(args, config))
