"""The agent's command line: `edge agent --config FILE` (in the server's `edge` command and
in the `edge-agent` distribution's), `edge-agent --config FILE` and `python -m edge_agent`.

It reads the configuration (a bad one: one line naming the key, exit code 2), makes the
state folder owner-only, and runs until SIGTERM or Ctrl-C (exit code 0). The file may also
be named by EDGE_AGENT_CONFIG, as a systemd unit's Environment= would.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from edge_agent.settings import Settings, SettingsError, load

CONFIG_ENV = "EDGE_AGENT_CONFIG"
Main = Callable[[asyncio.Event], Awaitable[None]]


def add_parser(sub: Any) -> None:
    """`agent` as a subcommand of an `edge` command."""
    _arguments(sub.add_parser("agent", help="on the device: the reference device agent"))


def run(args: argparse.Namespace) -> int:
    path = args.config or os.environ.get(CONFIG_ENV)
    if not path:
        return _fail(f"give the configuration file with --config (or ${CONFIG_ENV})", 2)
    try:
        settings = load(Path(path))
    except SettingsError as bad:
        return _fail(str(bad), 2)
    return serve(settings)


def serve(settings: Settings) -> int:
    """Runs the agent of these settings until a signal: 0, or 1 when it cannot start."""
    from edge_agent.agent import Agent
    from edge_agent.files import state_folder

    try:
        if settings.state_dir is not None:
            state_folder(settings.state_dir)
        asyncio.run(until_signal(Agent(settings).run))
    except OSError as failed:
        return _fail(f"{failed.strerror or failed}: {failed.filename or ''}".rstrip(": "), 1)
    return 0


async def until_signal(main: Main) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await main(stop)


def main(argv: Sequence[str] | None = None) -> int:
    """`edge-agent --config FILE`."""
    parser = argparse.ArgumentParser(prog="edge-agent", description="The edge device agent.")
    _arguments(parser)
    return run(parser.parse_args(argv))


def edge_main(argv: Sequence[str] | None = None) -> int:
    """The `edge` command of the agent's own distribution: `edge agent` and `edge version`."""
    parser = argparse.ArgumentParser(prog="edge", description="The edge device agent.")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    sub.add_parser("version", help="print the agent's version")
    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"edge agent {_version()}")
        return 0
    return run(args)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help=f"the configuration file (default: ${CONFIG_ENV})")


def _version() -> str:
    from importlib import metadata

    for distribution in ("edge-agent", "edge"):
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


def _fail(message: str, code: int) -> int:
    print(f"edge agent: {message}", file=sys.stderr)
    return code
