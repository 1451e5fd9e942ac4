"""What a command looks like on the wire and in a view (docs/commands.md): its topic and
message to the device, the reply the device sends back, and the command as HTTP shows it.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from edge.devices.topics import device_topic
from edge.kernel import clock, fields, json_text
from edge.kernel.errors import EdgeError, ValidationError
from edge.kernel.ids import new_id
from storage.commands import WAITING, Command
from storage.records import Device

Row = dict[str, Any]
MAX_NAME = 128
DEFAULT_TIMEOUT, MAX_TIMEOUT = 10, 60
DEFAULT_TTL, MAX_TTL = 3600, 7 * 86400
MIN_STATUS, MAX_STATUS = -(2**31), 2**31 - 1  # a reply's status: a 32-bit integer
COMMANDS, REPLY = "commands", "reply"  # <own topic>/commands/<request_id>[/reply]


def topic(device: Device, request_id: str) -> str:
    return device_topic(device, COMMANDS, request_id)


def request_of(reply_topic: str) -> str:
    """The request ID of `.../commands/<request_id>/reply`."""
    return reply_topic.split("/")[-2]


def message(command: Command) -> bytes:
    body = {
        "request_id": command.id,
        "name": command.name,
        "payload": command.payload,
        "expires_date": command.expires_date,
    }
    return json.dumps(body).encode()


def lasts(body: Row) -> tuple[int, int]:
    """(seconds the caller waits, seconds the command lasts), by the body's rules: a
    queued command lasts its `ttl`; one waited for, its `timeout`."""
    queued = bool(body.get("queue", False))
    if "ttl" in body and not queued:
        raise ValidationError("ttl", "applies only with queue true")
    timeout = seconds("timeout", body.get("timeout", DEFAULT_TIMEOUT), MAX_TIMEOUT)
    return timeout, seconds("ttl", body.get("ttl", DEFAULT_TTL), MAX_TTL) if queued else timeout


def seconds(field: str, raw: Any, high: int) -> int:
    if isinstance(raw, float) and raw.is_integer():  # JSON does not tell 5.0 from 5
        raw = int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= high:
        raise ValidationError(field, f"must be a whole number of seconds from 1 to {high}")
    return raw


def parse_reply(payload: bytes) -> tuple[int, Row] | str:
    """`{"status": <int>, "payload": {...}}` (payload optional), or why it is not one.

    Read by the one JSON reader (edge/kernel/json_text.py), so nesting past its depth,
    NaN, Infinity and lone surrogates are refused here, not by a RecursionError or by the
    table's json_valid CHECK; `status` must fit SQLite's 64-bit integer."""
    try:
        body = json_text.parse(payload, field="reply", max_bytes=len(payload))
    except EdgeError as exc:  # its field may be a key of the device's: keep the rule only
        return exc.message.rsplit(": ", 1)[-1]
    if not isinstance(body, dict):
        return "not a JSON object"
    status, data = body.get("status"), body.get("payload", {})
    if isinstance(status, bool) or not isinstance(status, int):
        return "status: must be an integer"
    if not MIN_STATUS <= status <= MAX_STATUS:
        return f"status: must be from {MIN_STATUS} to {MAX_STATUS}"
    if not isinstance(data, dict):
        return "payload: must be a JSON object"
    return status, data


def new(device: Device, by: str, body: Row, queued: bool, seconds: int) -> Command:
    now = clock.now()
    return Command(
        id=new_id(),
        org_id=device.org_id,
        device_id=device.id,
        name=fields.text("name", body.get("name"), max_length=MAX_NAME),
        payload=body.get("payload") or {},
        state="queued" if queued else "sent",
        queued=queued,
        created_date=clock.iso(now),
        created_by=by,
        expires_date=clock.iso(now + timedelta(seconds=seconds)),
        delivered_date=None,
        ended_date=None,
        reply_status=None,
        reply_payload=None,
    )


def view(command: Command, whole: bool = True) -> Row:
    """A command as HTTP shows it: one still waiting past its time reads `expired` (the
    sweep writes so later). Not `whole` (in lists): without its payload nor its reply's,
    which GET of the one command shows; a page stays small however large they are."""
    state = command.state
    if state in WAITING and command.expires_date <= clock.now_iso():
        state = "expired"
    out: Row = {
        "request_id": command.id,
        "device_id": command.device_id,
        "name": command.name,
        "state": state,
        "queued": command.queued,
        "created_date": command.created_date,
        "created_by": command.created_by,
        "expires_date": command.expires_date,
    }
    if whole:
        out["payload"] = command.payload
    for name in ("delivered_date", "ended_date"):
        if getattr(command, name) is not None:
            out[name] = getattr(command, name)
    if command.reply_status is not None:
        out["reply"] = {"status": command.reply_status}
        if whole:
            out["reply"].update(_reply_payload(command.reply_payload))
    return out


def _reply_payload(kept: Row | None) -> Row:
    """An answered command's reply payload; None kept: it was dropped, past what the
    replies to its caller's commands may keep (`command_device_bytes`, the service's
    `_keep_reply`), which the view says."""
    return {"payload": kept} if kept is not None else {"payload": {}, "payload_dropped": True}
