"""The agent's command line: `edge agent --config FILE` (in the server's `edge` command and
in the `edge-agent` distribution's), `edge-agent --config FILE` and `python -m edge_agent`;
and `edge agent provision --config FILE ...`, which enrolls the device with a claim
(provision.py) and writes what `edge agent --config FILE` then runs with.

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
    if getattr(args, "agent_command", None) == "provision":
        return provision(Path(path), args)
    try:
        settings = load(Path(path))
    except SettingsError as bad:
        return _fail(str(bad), 2)
    return serve(settings)


def provision(config_file: Path, args: argparse.Namespace) -> int:
    """Enrolls the device: 0 once provisioned (or already), 1 refused, 2 a bad flag."""
    from edge_agent import provision as provisioning

    flags = {name: getattr(args, name) for name in PROVISION_FLAGS}
    try:
        chosen = provisioning.plan(config_file, flags)
        answer = provisioning.run(chosen)
    except SettingsError as bad:
        return _fail(str(bad), 2)
    except (provisioning.Refused, OSError, ValueError) as failed:
        return _fail(str(failed), 1)
    if not answer:
        print(f"already provisioned ({chosen.state_dir}); nothing done", flush=True)
    else:
        print(f"provisioned as device {answer['id']} ({answer.get('name', '')})", flush=True)
        print(f"run: edge agent --config {config_file}", flush=True)
    return 0


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


PROVISION_FLAGS = ("server", "claim_id", "secret", "qr", "name", "ca", "mqtt", "state_dir")


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help=f"the configuration file (default: ${CONFIG_ENV})")
    sub = parser.add_subparsers(dest="agent_command")
    enroll = sub.add_parser("provision", help="enroll this device with a provisioning claim")
    enroll.add_argument("--config", help="the configuration file to run with (written if missing)")
    enroll.add_argument("--server", help="the server's URL (or the QR code's, or the file's)")
    enroll.add_argument("--claim-id", dest="claim_id", help="the claim's ID")
    enroll.add_argument("--secret", help="the claim's secret (ecs_...)")
    enroll.add_argument("--qr", help="a file holding the claim's QR text (-: standard input)")
    enroll.add_argument("--name", help="the device's name (default: its ID)")
    enroll.add_argument("--ca", help="the site CA to check https:// with before the agent has it")
    enroll.add_argument("--mqtt", help="the broker's URL (default: mqtts://<broker>:8883)")
    enroll.add_argument(
        "--state-dir",
        dest="state_dir",
        help="the agent's files (default: the file's state_dir, else /var/lib/edge-agent)",
    )


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
