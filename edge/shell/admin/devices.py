"""`edge admin devices list|create|show|suspend|resume|reset`, through
edge/accounts/devices.py as the HTTP interface's handlers call it, as the operator:
- list: GET /v2/devices; show: GET /v2/devices/{id};
- create: POST /v2/devices. Its API key is shown once, or written to `--out FILE`; the
  key pair issued with it is not shown (a private key does not belong in a terminal):
  `edge device bundle ID --out DIR` writes a certificate and key to a folder instead;
- suspend / resume: PATCH /v2/devices/{id} with is_active false / true (a suspended
  device's API key and certificate are refused, on HTTP and MQTT);
- reset: a new API key, as POST /v2/devices/{id}/reset-api-key (audited
  `device_api_key_reset`); the old key stops working at once. Its MQTT certificate is
  reset by `edge device bundle`.
A device is named by its ID or its name (unique in its organization).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from edge.kernel.config import Config
from edge.shell.admin import output, pages
from edge.shell.admin.kinds import Kind
from edge.shell.admin.operator import Operator, run
from edge.shell.admin.verbs import Flags, kind, verb

COLUMNS = (
    ("id", "ID"),
    ("name", "NAME"),
    ("is_active", "ACTIVE"),
    ("project_id", "PROJECT"),
    ("last_seen", "LAST SEEN"),
)
KEY_PAIR = ("certificate", "public_key", "private_key")
BUNDLE = "for MQTT over TLS: edge device bundle {id} --out DIR (a certificate and its key)"


def _members(group: str | None, project: str | None) -> Any:
    from edge.accounts.lists import Filters

    return Filters(group_id=group, project_id=project)


async def find(operator: Operator, given: str) -> str:
    devices = operator.services.devices
    return await pages.by_id_or_name(
        lambda device_id: devices.get(operator.principal, device_id),
        lambda query: devices.list(operator.principal, query, _members(None, None)),
        "device",
        operator.where,
        given,
    )


DEVICES = Kind(
    "device",
    COLUMNS,
    lambda services: services.devices,
    find,
    "ID or name",
    "its API key and certificate are refused",
    _members,
)


def add(sub: Any, flags: Flags) -> None:
    verbs = kind(sub, "devices", "the devices of an organization")
    DEVICES.add_verbs(verbs, flags, "pump-7")
    create = verb(
        verbs,
        "create",
        "create a device, as POST /v2/devices does; its API key is shown once (or written"
        " to --out)",
        "edge admin devices create pump-7 --org clinic --out pump-7.key",
        _create,
        flags,
    )
    create.add_argument("name", help="the device's name (unique in its organization)")
    create.add_argument("--project", help="the device's home project (its ID)")
    _out_argument(create)
    reset = verb(
        verbs,
        "reset",
        "issue a new API key (the old one stops working at once), shown once or written to"
        " --out; for a new certificate use `edge device bundle`",
        "edge admin devices reset pump-7 --org clinic --out pump-7.key",
        _reset,
        flags,
    )
    reset.add_argument("device", help="the device's ID or name")
    _out_argument(reset)


def _out_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write the API key to this new file (owner-only) instead of showing it",
    )


def _create(args: argparse.Namespace, config: Config) -> int:
    output.check_secret_file(args.out)
    body: dict[str, Any] = {"name": args.name}
    if args.project:
        body["project_id"] = args.project

    async def create(operator: Operator) -> dict[str, Any]:
        return await operator.services.devices.create(operator.principal, body)

    made = {k: v for k, v in run(config, args, create).items() if k not in KEY_PAIR}
    key = made.pop("api_key")
    if args.json:
        output.document({"device": _with_key(args, key, made)})
        return 0
    print(f"created device {made['id']} ({output.cell(args.name)}) in {args.org}")
    output.secret(key, args.out, "API key")
    print("  " + BUNDLE.format(id=made["id"]))
    return 0


def _reset(args: argparse.Namespace, config: Config) -> int:
    output.check_secret_file(args.out)

    async def reset(operator: Operator) -> tuple[str, str]:
        device_id = await find(operator, args.device)
        made = await operator.services.devices.reset_api_key(operator.principal, device_id)
        return device_id, str(made["api_key"])

    device_id, key = run(config, args, reset)
    if args.json:
        output.document(_with_key(args, key, {"id": device_id}))
        return 0
    print(f"new API key for device {device_id}; the old one no longer works")
    output.secret(key, args.out, "API key")
    return 0


def _with_key(args: argparse.Namespace, key: str, body: dict[str, Any]) -> dict[str, Any]:
    """For --json: the key as the HTTP answer names it (`api_key`), or, with --out, the
    file it was written to (`api_key_file`)."""
    if args.out is None:
        return {**body, "api_key": key}
    output.write_secret(args.out, key)
    return {**body, "api_key_file": str(args.out)}
