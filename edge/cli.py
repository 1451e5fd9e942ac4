"""The `edge` command: serve, init, admin create-org, version.

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
    admin = sub.add_parser("admin", help="administration commands")
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    create = admin_sub.add_parser("create-org", help="create an organization and its first admin")
    _setting_flags(create, only=("data_dir", "log_level"))
    create.add_argument("--name", required=True)
    create.add_argument("--alias")
    create.add_argument("--admin-email", dest="org_admin_email", required=True)
    create.add_argument("--admin-password", dest="org_admin_password", required=True)
    return parser


def _setting_flags(parser: argparse.ArgumentParser, only: tuple[str, ...] | None = None) -> None:
    parser.add_argument("--config", type=Path, help="TOML config file (also EDGE_CONFIG)")
    for setting in SETTINGS:
        if only is None or setting.name in only:
            parser.add_argument(setting.flag, dest=setting.name, help=setting.help)


def _config(args: argparse.Namespace) -> Config:
    flags = {s.name: getattr(args, s.name, None) for s in SETTINGS}
    config_file = getattr(args, "config", None) or os.environ.get("EDGE_CONFIG")
    return load(flags, os.environ, Path(config_file) if config_file else None)


def _serve(args: argparse.Namespace, config: Config) -> int:
    from edge import app, logs
    from storage import layout

    logs.setup(config.log_format, config.log_level)
    layout.prepare(config.data_dir)
    try:
        layout.lock(config.data_dir)  # held until the process ends
    except BlockingIOError:
        return _fail(f"another edge server is already running on {config.data_dir}", 1)
    site = app.open_site(config)
    _announce_site(site, config)
    app.run(site, ready=lambda: _announce_urls(config))
    return 0


def _init(args: argparse.Namespace, config: Config) -> int:
    from edge import app

    site = app.open_site(config)
    site.services.db.close()
    _announce_site(site, config)
    return 0


def _announce_site(site: Any, config: Config) -> None:
    """Before binding: a generated staff password must be shown even if binding then fails."""
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


def _create_org(args: argparse.Namespace, config: Config) -> int:
    from edge import app
    from storage import staff

    site = app.open_site(config)
    try:
        owner = site.services.db.read(staff.first)
        principal = Principal("staff", owner["id"], None)
        body: dict[str, Any] = {"name": args.name}
        if args.alias:
            body["alias"] = args.alias
        admin = {"email": args.org_admin_email, "password": args.org_admin_password}
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
    "admin": _create_org,
}
