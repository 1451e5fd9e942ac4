"""A twin's MQTT topics and payloads, under the device's own namespace
`<root>/devices/<device_id>/twin/` (docs/twins.md, beside AWS's shadow topics):

- `get` (the device) -> `get/accepted` (the document) or `get/rejected`;
- `update` (the device, `{"reported": ..., "version"?, "client_token"?}`) ->
  `update/accepted` (the document) or `update/rejected`;
- `update/delta` (the server): what `desired` holds that `reported` does not.

A rejection carries `code` (as the HTTP status would be), `message` (naming the rule) and
the request's `client_token`; every reply echoes it when it is a string of at most
`MAX_CLIENT_TOKEN` characters.
"""

from __future__ import annotations

import json
from typing import Any

from edge.devices import replies
from edge.devices.topics import device_topic
from storage.records import Device, Twin

MAX_CLIENT_TOKEN = replies.MAX_CLIENT_TOKEN  # an update with a longer one is rejected

TWIN, GET, UPDATE = "twin", "get", "update"
DELTA = "update/delta"


def delta_topic(device: Device) -> str:
    return device_topic(device, TWIN, DELTA)


def delta_payload(twin: Twin, difference: dict[str, Any]) -> bytes:
    body = {"delta": difference, "version": twin.version, "timestamp": twin.updated_date}
    return json.dumps(body).encode()


def accepted(document: dict[str, Any], client_token: Any) -> bytes:
    return json.dumps(replies.with_token(dict(document), client_token)).encode()


def rejected(code: int, message: str, client_token: Any) -> bytes:
    body = {"code": code, "message": message}
    return json.dumps(replies.with_token(body, client_token)).encode()
