"""The `edge` command: serve, init, admin (orgs, users, groups, devices), audit list, device
bundle (these three in edge/shell/), backup, restore, check, selftest, version, and the
tunnel helpers (tunnel connect, tunnel agent: edge/tunnel_clients/), and the device agent
(agent: edge_agent/, which imports nothing of the server).

Exit codes: 0 done, 1 the operation failed, 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edge import BUILD_VERSION, INTERFACE_VERSION, banner
from edge.kernel.config import BY_NAME, SETTINGS, Config, ConfigError, load
from edge.kernel.errors import EdgeError, ValidationError

if TYPE_CHECKING:
    from edge.ops.backup import Summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    if args.command == "version":
        print(f"edge {BUILD_VERSION} (interface {INTERFACE_VERSION})")
        return 0
    if args.command == "tunnel":
        from edge.tunnel_clients import commands

        return commands.run(args)
    if args.command == "agent":
        from edge_agent import cli as agent_cli

        return agent_cli.run(args)
    if args.command == "selftest":
        from edge.ops import selftest

        return 0 if selftest.run() else 1
    try:
        config = _config(args)
    except ConfigError as exc:
        return _fail(str(exc), 2)
    return _run(args, config)


def _run(args: argparse.Namespace, config: Config) -> int:
    """Run a command; every expected failure becomes one line on stderr and an exit code."""
    from edge.ops import ownership

    refused = ownership.refusal(config.data_dir, _command_words(args))
    if refused:
        return _fail(refused, 2)  # before the command touches anything in the folder
    try:
        return int(COMMANDS[args.command](args, config))
    except ValidationError as exc:
        # A first-start setting (admin_password, admin_email) that breaks a rule is bad
        # configuration, like any other bad value; for `admin` the field names an argument.
        return _fail(exc.message, 2 if _is_setting_error(args, exc) else 1)
    except EdgeError as exc:
        return _fail(exc.message, 1)
    except OSError as exc:
        return _fail(_os_message(exc), 1)


def _command_words(args: argparse.Namespace) -> str:
    """`backup`, `admin unlock`, `audit list`: the command as typed, for a hint."""
    sub = getattr(args, "admin_command", None) or getattr(args, "audit_command", None)
    return f"{args.command} {sub}" if sub else str(args.command)


def _is_setting_error(args: argparse.Namespace, exc: ValidationError) -> bool:
    return args.command in ("serve", "init") and exc.field in BY_NAME


def _os_message(exc: OSError) -> str:
    """The operating system's words (address in use, not a directory), without a traceback."""
    text = exc.strerror or str(exc)
    return f"{text}: {exc.filename}" if exc.filename else text


def _fail(message: str, code: int) -> int:
    print(f"edge: {message}", file=sys.stderr)
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="edge", description="The edge server.")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="start the server")
    init = sub.add_parser("init", help="prepare a data folder and exit")
    for command in (serve, init):
        _setting_flags(command)
    sub.add_parser("version", help="print the interface and build versions")
    sub.add_parser("selftest", help="start each part of the runtime stack once and report")
    backup = sub.add_parser("backup", help="copy a site (safe while the server runs)")
    where = backup.add_mutually_exclusive_group(required=True)
    where.add_argument("dest", type=Path, nargs="?", help="a new or empty folder for the copy")
    where.add_argument(
        "--into",
        type=Path,
        metavar="FOLDER",
        help="make edge-<UTC time> in FOLDER, then remove the oldest beyond backup_keep",
    )
    restore = sub.add_parser("restore", help="make a site from a backup")
    restore.add_argument("source", type=Path, help="a folder made by `edge backup`")
    restore.add_argument(
        "--force",
        action="store_true",
        help="replace a non-empty data folder (it is moved aside, not deleted)",
    )
    check = sub.add_parser("check", help="check a data folder: database, migrations, keys, files")
    _setting_flags(backup, only=("data_dir", "backup_keep"))
    _setting_flags(restore, only=("data_dir",))
    _setting_flags(check, only=("data_dir", "tls_cert", "tls_key"))
    from edge.tunnel_clients import commands
    from edge_agent import cli as agent_cli

    commands.add_parser(sub)
    agent_cli.add_parser(sub)
    _audit_parser(sub)
    _device_parser(sub)
    from edge.shell import admin

    admin.add_parser(sub, lambda command: _setting_flags(command, only=("data_dir", "log_level")))
    return parser


def _audit_parser(sub: Any) -> None:
    audit = sub.add_parser("audit", help="read the audit log (docs/audit.md)")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True)
    listing = audit_sub.add_parser(
        "list", help="the newest matching events, oldest first, one line each"
    )
    _setting_flags(listing, only=("data_dir", "log_level"))
    listing.add_argument("--org", help="events of this organization (its ID or alias)")
    listing.add_argument("--action", help="one action, such as sign_in_failed")
    listing.add_argument("--actor", help="the account (or device) ID that acted")
    listing.add_argument("--target", help="the ID acted on (a user, role, device, access)")
    listing.add_argument("--since", help="from this date or time (UTC; a date: its start)")
    listing.add_argument("--until", help="up to this date or time (UTC; a date: its end)")
    listing.add_argument("--limit", type=int, default=100, help="at most this many (1-1000)")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")


def _device_parser(sub: Any) -> None:
    device = sub.add_parser("device", help="device commands")
    device_sub = device.add_subparsers(dest="device_command", required=True)
    bundle = device_sub.add_parser(
        "bundle",
        help="reset a device's MQTT credentials and write its certificate, key, CA, config"
        " and connect commands to a folder (docs/devices.md)",
    )
    _setting_flags(bundle)
    bundle.add_argument("device", help="the device's ID")
    bundle.add_argument("--out", type=Path, required=True, help="a new or empty folder")


def _setting_flags(parser: argparse.ArgumentParser, only: tuple[str, ...] | None = None) -> None:
    parser.add_argument("--config", type=Path, help="TOML config file (also EDGE_CONFIG)")
    parser.add_argument(
        "--config-if-exists",
        type=Path,
        metavar="FILE",
        help="TOML config file read only when it exists; --config and EDGE_CONFIG must exist",
    )
    for setting in SETTINGS:
        if only is None or setting.name in only:
            parser.add_argument(setting.flag, dest=setting.name, help=setting.help)


def _config(args: argparse.Namespace) -> Config:
    flags = {s.name: getattr(args, s.name, None) for s in SETTINGS}
    return load(flags, os.environ, _config_file(args))


def _config_file(args: argparse.Namespace) -> Path | None:
    """--config, else EDGE_CONFIG (both must exist), else --config-if-exists if it does."""
    given = getattr(args, "config", None) or os.environ.get("EDGE_CONFIG")
    if given:
        return Path(given)
    optional: Path | None = getattr(args, "config_if_exists", None)
    return optional if optional is not None and optional.exists() else None


def _serve(args: argparse.Namespace, config: Config) -> int:
    import uvloop

    from edge import app
    from edge.kernel import logs
    from edge.ops import memory
    from storage import layout

    logs.setup(config.log_format, config.log_level)
    memory.start_tracing(config.memory_trace_frames)  # before the site is built: trace it too
    sockets = app.bind(config)  # first: a busy port must not leave a half-made site behind
    layout.prepare(config.data_dir)
    try:
        layout.lock(config.data_dir)  # held until the process ends
    except BlockingIOError:
        sockets.close()
        return _fail(f"another edge server is already running on {config.data_dir}", 1)
    site = app.open_site(config)
    banner.site(config, site.first_staff)
    run = uvloop.run if config.event_loop == "uvloop" else asyncio.run
    run(app.serve(site, sockets, ready=lambda: _ready(config)))
    return 0


def _init(args: argparse.Namespace, config: Config) -> int:
    from edge import app

    site = app.open_site(config)
    site.services.db.close()
    banner.site(config, site.first_staff)
    return 0


def _ready(config: Config) -> None:
    """Once every listener answers: the URLs, then systemd's READY=1 (a `Type=notify` unit)."""
    from edge import app
    from edge.ops import readiness

    banner.urls(config, app.mqtt_urls(config))
    readiness.ready()


def _admin(args: argparse.Namespace, config: Config) -> int:
    from edge.shell import admin

    return admin.run(args, config)


def _audit(args: argparse.Namespace, config: Config) -> int:
    import json

    from edge import app
    from edge.shell import audit_log

    wanted = audit_log.Wanted(
        args.org, args.action, args.actor, args.target, args.since, args.until, args.limit
    )
    site = app.open_site(config)
    try:
        found = audit_log.events(site.services, wanted)
    finally:
        site.services.db.close()
    for event in found:
        print(json.dumps(event, sort_keys=True) if args.json else audit_log.line(event))
    return 0


def _device(args: argparse.Namespace, config: Config) -> int:
    from edge import app
    from edge.shell import device_bundle

    site = app.open_site(config)
    try:
        made = asyncio.run(device_bundle.make(site.services, args.device, args.out))
    finally:
        site.services.db.close()
    banner.first_staff(config, site.first_staff)
    print(f"bundle of device {made.device_id} in {made.folder}: {made.url}")
    print("  its MQTT credentials were reset: the earlier certificate is refused from now on")
    print(f"  {device_bundle.README} has the mosquitto and paho commands; copy the folder to")
    print(f"  the device only ({device_bundle.KEY} is its private key) and then delete it here")
    return 0


def _backup(args: argparse.Namespace, config: Config) -> int:
    from edge.ops import backup

    if args.into is not None:
        return _backup_into(args.into, config)
    print(f"backing up {config.data_dir} to {args.dest}")
    _backup_done(backup.backup(config.data_dir, args.dest))
    return 0


def _backup_into(folder: Path, config: Config) -> int:
    from edge.ops import backup_rotation

    print(f"backing up {config.data_dir} into {folder}")
    done = backup_rotation.into(config.data_dir, folder, config.backup_keep)
    _backup_done(done.summary)
    print(f"  written to {done.path}")
    for path in done.removed:
        print(f"  removed {path.name} (keeping the newest {config.backup_keep})")
    return 0


def _backup_done(done: Summary) -> None:
    print(
        f"backup complete: {done.files} files, {_mib(done.bytes)}, schema {done.schema}, "
        f"in {done.seconds:.1f} s"
    )


def _restore(args: argparse.Namespace, config: Config) -> int:
    from edge.ops import backup

    print(f"restoring {args.source} into {config.data_dir}")
    done = backup.restore(args.source, config.data_dir, force=args.force)
    print(
        f"restore complete: {done.files} files, {_mib(done.bytes)}, schema {done.schema}, "
        f"in {done.seconds:.1f} s; start the server on {config.data_dir}"
    )
    return 0


def _check(args: argparse.Namespace, config: Config) -> int:
    from edge.ops import check

    print(f"checking {config.data_dir}")
    tls = (config.tls_cert, config.tls_key) if config.tls_cert and config.tls_key else None
    return 0 if check.run(config.data_dir, tls=tls) else 1


def _mib(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MiB"


COMMANDS = {
    "backup": _backup,
    "restore": _restore,
    "check": _check,
    "serve": _serve,
    "init": _init,
    "admin": _admin,
    "audit": _audit,
    "device": _device,
}
