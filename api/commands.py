"""Commands with replies (docs/commands.md), an extension beyond the interface.

- POST /v2/devices/{device_id}/commands               those who may update the device:
                                                      200 with the reply, 202 when queued,
                                                      504 no reply in time, 502 an invalid
                                                      reply, 409 offline,
                                                      429 past the per-minute limit or
                                                      the caller's share of the device's
                                                      command_device_bytes, 413 past the
                                                      broker's message size or that share
- GET  /v2/devices/{device_id}/commands               the same callers; newest first,
                                                      without payloads (GET the one);
                                                      the list conventions, without
                                                      `search` (a 400: no full-text index)
- GET  /v2/devices/{device_id}/commands/{request_id}  the same callers
- POST /v2/devices/{device_id}/commands/{request_id}/cancel
                                                      the same callers: a queued command
                                                      still waiting ends `canceled`, its
                                                      bytes freed; 409 in any other state
                                                      (a POST, not a DELETE: the command is
                                                      kept, readable, until the sweep)
"""

from __future__ import annotations

from aiohttp import web

from api import bodies, listing
from api.keys import SERVICES
from api.model_fields import page
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import BOOL, INT, OBJECT, STR, Schema, integer, obj, text
from edge.commands.messages import MAX_NAME, MAX_TIMEOUT, MAX_TTL
from edge.commands.service import TABLE, Commands

# Commands have no full-text index: `?search=` is a 400, never an empty list.
LISTABLE = listing.Listable(
    "device_commands", TABLE.kinds(), table=TABLE, default_desc=True, searchable=False
)
SEND_COMMAND = obj(
    {
        "name": text(MAX_NAME),
        "payload": OBJECT,
        "timeout": integer(1, MAX_TIMEOUT),
        "queue": BOOL,
        "ttl": integer(1, MAX_TTL),
    },
    ("name",),
    title="SendCommandBody",
)
_DATE: Schema = {"type": "string", "format": "date-time"}
_FIELDS: dict[str, Schema] = {
    "request_id": STR,
    "device_id": STR,
    "name": STR,
    "state": {
        "type": "string",
        "enum": [
            "sent",
            "queued",
            "delivered",
            "answered",
            "timed_out",
            "expired",
            "canceled",
        ],
    },
    "queued": BOOL,
    "created_date": _DATE,
    "created_by": STR,
    "expires_date": _DATE,
    "delivered_date": _DATE,
    "ended_date": _DATE,
}
_REQUIRED = ("request_id", "device_id", "name", "state", "queued", "created_date")
_COMMAND: Schema = obj(
    {
        **_FIELDS,
        "payload": OBJECT,
        "reply": obj(
            {"status": INT, "payload": OBJECT, "payload_dropped": BOOL}, ("status", "payload")
        ),
    },
    (*_REQUIRED, "payload"),
    title="Command",
)
# In lists: without the payload and the reply's payload (GET the one command for them).
_SUMMARY: Schema = obj(
    {**_FIELDS, "reply": obj({"status": INT}, ("status",))},
    _REQUIRED,
    title="CommandSummary",
)
MODELS: dict[str, Schema] = {
    "Command": _COMMAND,
    "CommandSummary": _SUMMARY,
    "CommandInfo": obj({"command": _COMMAND}, ("command",)),
    "CommandList": page("A page of a device's commands", "commands", "CommandSummary"),
}


def _commands(request: web.Request) -> Commands:
    return request.app[SERVICES].commands


async def send_command(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, SEND_COMMAND)
    device_id = request.match_info["device_id"]
    status, command = await _commands(request).send(principal(request), device_id, body)
    return json_response({"command": command}, status=status)


async def list_commands(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    device_id = request.match_info["device_id"]
    found = await services.commands.list(principal(request), device_id, query)
    return listing.respond("commands", found, query, services.cursors, LISTABLE.resource)


async def get_command(request: web.Request) -> web.Response:
    info = request.match_info
    found = _commands(request).get(principal(request), info["device_id"], info["request_id"])
    return json_response(found)


async def cancel_command(request: web.Request) -> web.Response:
    info = request.match_info
    commands = _commands(request)
    found = await commands.cancel(principal(request), info["device_id"], info["request_id"])
    return json_response(found)


ROUTES = [
    Route(
        "POST",
        "/v2/devices/{device_id}/commands",
        send_command,
        "token",
        "Send a command to a device and wait for its reply (or queue it)",
        "devices",
        body=SEND_COMMAND,
        responses={200: "CommandInfo", 202: "CommandInfo"},
        errors=(409, 413, 429, 502, 504),
        extension=True,
    ),
    Route(
        "GET",
        "/v2/devices/{device_id}/commands",
        list_commands,
        "token",
        "A device's commands, newest first",
        "devices",
        query=(*LISTABLE.common(), *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "CommandList"},
        extension=True,
    ),
    Route(
        "GET",
        "/v2/devices/{device_id}/commands/{request_id}",
        get_command,
        "token",
        "One command of a device, with its reply once answered",
        "devices",
        responses={200: "CommandInfo"},
        extension=True,
    ),
    Route(
        "POST",
        "/v2/devices/{device_id}/commands/{request_id}/cancel",
        cancel_command,
        "token",
        "Cancel a queued command still waiting for its device or its reply",
        "devices",
        responses={200: "CommandInfo"},
        errors=(409,),
        extension=True,
    ),
]
