"""A device's job topics and payloads, under its own namespace
`<root>/devices/<device_id>/jobs/` (docs/jobs.md, beside AWS IoT Jobs' names):

- `notify-next` (the server, QoS 1): the device's next execution, with its document, or
  `{}` when none is left; sent when it may have changed and tells the device something
  new (edge/jobs/notices.py), and again when the device subscribes or comes back holding
  the subscription;
- `get` (the device) -> `get/accepted` (`{"jobs": [...]}`: its pending executions) or
  `get/rejected`;
- `<job_id>/get` (the device) -> `<job_id>/get/accepted` (the execution, with its
  document) or `<job_id>/get/rejected`;
- `<job_id>/update` (the device: `{"state"?, "status_details"?, "progress"?,
  "expected_version"?, "client_token"?}`) -> `<job_id>/update/accepted` or
  `<job_id>/update/rejected`.

A rejection carries `code` (as the HTTP status of the same refusal), `message` and, for a
version conflict, the execution's current `version`; every reply echoes a `client_token`
of at most 64 characters (edge/devices/replies.py).
"""

from __future__ import annotations

import json
from typing import Any

from edge.devices import replies
from edge.devices.topics import Placed, device_topic

JOBS, NOTIFY_NEXT, GET, UPDATE = "jobs", "notify-next", "get", "update"


def notify_topic(device: Placed) -> str:
    return device_topic(device, JOBS, NOTIFY_NEXT)


def notify_payload(execution: dict[str, Any] | None, now: str) -> bytes:
    body: dict[str, Any] = {"timestamp": now}
    if execution is not None:
        body["execution"] = execution
    return json.dumps(body).encode()


def reply(body: dict[str, Any], client_token: Any) -> bytes:
    return json.dumps(replies.with_token(body, client_token)).encode()
