"""The `edge` command: serve, init, admin (create-org, reset-password, unlock), audit
list, backup, restore, check, selftest, version, and the tunnel helpers (tunnel connect,
tunnel agent).

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

from edge import BUILD_VERSION, INTERFACE_VERSION
from edge.config import BY_NAME, SETTINGS, Config, ConfigError, load
from edge.errors import EdgeError, ValidationError
from edge.principal import Principal

if TYPE_CHECKING:
    from edge.auth.staff import FirstStaff


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
        from edge.tunnels import commands

        return commands.run(args)
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
    backup.add_argument("dest", type=Path, help="a new or empty folder for the copy")
    restore = sub.add_parser("restore", help="make a site from a backup")
    restore.add_argument("source", type=Path, help="a folder made by `edge backup`")
    restore.add_argument(
        "--force",
        action="store_true",
        help="replace a non-empty data folder (it is moved aside, not deleted)",
    )
    check = sub.add_parser("check", help="check a data folder: database, migrations, keys, files")
    for command in (backup, restore, check):
        _setting_flags(command, only=("data_dir",))
    from edge.tunnels import commands

    commands.add_parser(sub)
    _audit_parser(sub)
    admin = sub.add_parser("admin", help="administration commands")
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    create = admin_sub.add_parser("create-org", help="create an organization and its first admin")
    _setting_flags(create, only=("data_dir", "log_level"))
    create.add_argument("--name", required=True)
    create.add_argument("--alias")
    create.add_argument("--admin-email", dest="org_admin_email", required=True)
    create.add_argument(
        "--admin-password",
        dest="org_admin_password",
        help="the admin's password (default: asked for, or read from standard input)",
    )
    for name, text in (
        ("reset-password", "set a new password (asked for, or read from standard input)"),
        ("unlock", "lift every sign-in block of an account"),
    ):
        command = admin_sub.add_parser(name, help=text)
        _setting_flags(command, only=("data_dir", "log_level"))
        command.add_argument("login", help="username or e-mail (of staff, unless --org)")
        command.add_argument("--org", help="the user's org (or project): its ID or alias")
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


def _setting_flags(parser: argparse.ArgumentParser, only: tuple[str, ...] | None = None) -> None:
    parser.add_argument("--config", type=Path, help="TOML config file (also EDGE_CONFIG)")
    parser.add_argument(
        "--config-if-exists",
        type=Path,
        metavar="FILE",
        help="TOML config file read only when it exists (the service unit's optional"
        " /etc/edge/edge.toml); --config and EDGE_CONFIG must exist",
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

    from edge import app, logs
    from edge.ops import memory
    from storage import layout

    logs.setup(config.log_format, config.log_level)
    memory.start_tracing(config.memory_trace_frames)  # before the site is built: trace it too
    sock = app.bind(config)  # first: a busy port must not leave a half-made site behind
    layout.prepare(config.data_dir)
    try:
        layout.lock(config.data_dir)  # held until the process ends
    except BlockingIOError:
        sock.close()
        return _fail(f"another edge server is already running on {config.data_dir}", 1)
    site = app.open_site(config)
    _announce_site(site, config)
    run = uvloop.run if config.event_loop == "uvloop" else asyncio.run
    run(app.serve(site, sock, ready=lambda: _announce_urls(config)))
    return 0


def _init(args: argparse.Namespace, config: Config) -> int:
    from edge import app

    site = app.open_site(config)
    site.services.db.close()
    _announce_site(site, config)
    return 0


def _announce_site(site: Any, config: Config) -> None:
    """Once the port is bound (so a site whose port is taken is never made): the data
    folder, and a generated staff password, shown this once."""
    print(f"edge {BUILD_VERSION} (interface {INTERFACE_VERSION})")
    print(f"  data folder:  {config.data_dir.resolve()}")
    _announce_first_staff(site.first_staff)


def _announce_urls(config: Config) -> None:
    """After binding, so the URLs are only printed once they answer."""
    from edge import app

    base = config.base_url
    print(f"  API:          {base}/v2")
    print(f"  reference:    {base}/v2/docs")
    print(f"  health:       {base}/v2/health")
    for label, url in app.mqtt_urls(config):
        print(f"  {label + ':':13} {url}")
    sys.stdout.flush()


def _announce_first_staff(first: FirstStaff | None) -> None:
    """The generated password is printed this once; later starts find the account and stay quiet."""
    if first is not None:
        print("First start: created the staff account")
        print(f"  username: {first.username}")
        print(f"  email:    {first.email}")
        if first.password:
            print(f"  password: {first.password}")
            print(f"  (also saved in {first.credentials_file}, readable by this user only)")
    sys.stdout.flush()


def _admin(args: argparse.Namespace, config: Config) -> int:
    command = {
        "create-org": _create_org,
        "reset-password": _reset_password,
        "unlock": _unlock,
    }[args.admin_command]
    return command(args, config)


def _audit(args: argparse.Namespace, config: Config) -> int:
    import json

    from edge import app
    from edge.ops import audit_log

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


def _reset_password(args: argparse.Namespace, config: Config) -> int:
    from edge import app
    from edge.ops import accounts

    password = accounts.read_password(sys.stdin)
    site = app.open_site(config)
    try:
        account = accounts.find(site.services, args.login, args.org)
        asyncio.run(accounts.reset_password(site.services, account, password))
    finally:
        site.services.db.close()
    _announce_first_staff(site.first_staff)
    then = "they choose their own at the next sign-in" if account.kind == "user" else "done"
    print(f"new password set for {account.kind} {account.username}; sessions ended; {then}")
    return 0


def _unlock(args: argparse.Namespace, config: Config) -> int:
    from edge import app
    from edge.ops import accounts

    site = app.open_site(config)
    try:
        account = accounts.find(site.services, args.login, args.org)
        cleared = asyncio.run(accounts.unlock(site.services, account))
    finally:
        site.services.db.close()
    print(f"lifted {cleared} sign-in block(s) of {account.kind} {account.username}")
    return 0


def _create_org(args: argparse.Namespace, config: Config) -> int:
    from edge import app
    from edge.ops import accounts
    from storage import staff

    password = args.org_admin_password or accounts.read_password(sys.stdin)
    site = app.open_site(config)
    try:
        owner = site.services.db.read(staff.first)
        principal = Principal("staff", owner["id"], None)
        body: dict[str, Any] = {"name": args.name}
        if args.alias:
            body["alias"] = args.alias
        admin = {"email": args.org_admin_email, "password": password}
        org_id = asyncio.run(site.services.orgs.create(principal, body, admin))
    finally:
        site.services.db.close()
    _announce_first_staff(site.first_staff)
    print(f"created organization {org_id} with admin {args.org_admin_email}")
    return 0


def _backup(args: argparse.Namespace, config: Config) -> int:
    from edge.ops import backup

    print(f"backing up {config.data_dir} to {args.dest}")
    done = backup.backup(config.data_dir, args.dest)
    print(
        f"backup complete: {done.files} files, {_mib(done.bytes)}, schema {done.schema}, "
        f"in {done.seconds:.1f} s"
    )
    return 0


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
    return 0 if check.run(config.data_dir) else 1


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
}
