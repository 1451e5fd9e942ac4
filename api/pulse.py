"""The site's pulse: GET /v2/pulse, an extension (docs/pulse.md).

Routes:
- GET /v2/pulse   "token": staff (the site's totals, or `org_id`'s counts) and org admins
                  (their own organization's, without the site's disk free); anyone else
                  403. `since` (date-time, default an hour before `until`, never before the
                  retention) and `until` (default now): at most a day per answer, else 400.

The console's Pulse page charts it; any client may read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from aiohttp import web

from api.keys import SERVICES
from api.model_fields import BOOL, DATETIME, INT, NUMBER, STR, Schema, list_of, model, one, ref
from api.params import only
from api.responses import NO_STORE, json_response
from api.routing import Route, principal
from edge.kernel import clock
from edge.kernel.errors import ValidationError

QUERY = ("since", "until", "org_id")
_SAMPLE = {
    "start": DATETIME | {"description": "the start of the span the counts cover"},
    "end": DATETIME | {"description": "its end"},
    "after_gap": BOOL | {"description": "the server was not sampling just before start"},
    "requests": INT | {"description": "HTTP requests answered in the span"},
    "requests_per_second": NUMBER,
    "mqtt_messages": INT | {"description": "MQTT messages devices published in the span"},
    "mqtt_messages_per_second": NUMBER,
    "sign_in_failures": INT | {"description": "wrong passwords and MFA codes in the span"},
    "devices_online": INT | {"description": "devices connected at its end"},
    "disk_free_bytes": {
        "type": ["integer", "null"],
        "description": "free on the data folder's disk (staff only; null: not readable then)",
    },
}
MODELS: dict[str, Schema] = {
    "PulseSample": model(
        "One sample: counts over its span (about a minute)",
        " ".join(f"{name}*" if name != "disk_free_bytes" else name for name in _SAMPLE),
        **_SAMPLE,
    ),
    "Pulse": model(
        "The samples of the site (org_id null) or of one organization, oldest first",
        "org_id* since* until* interval_seconds* retention_hours* samples*",
        org_id={"type": ["string", "null"], "description": "null: the site's totals"},
        since=DATETIME,
        until=DATETIME,
        interval_seconds=INT,
        retention_hours=INT,
        samples=list_of(ref("PulseSample")),
    ),
    "PulseInfo": one("The site's pulse", "pulse", "Pulse"),
}


async def get_pulse(request: web.Request) -> web.Response:
    query = only(request.query, QUERY)
    since, until = _moment(query, "since"), _moment(query, "until")
    pulse = request.app[SERVICES].pulse
    series = await pulse.series(principal(request), since, query.get("org_id"), until)
    return json_response({"pulse": series}, headers=NO_STORE)


def _moment(query: Mapping[str, str], name: str) -> datetime | None:
    text = query.get(name)
    if text is None:
        return None
    try:
        return clock.parse(text)
    except ValueError:
        raise ValidationError(name, "must be an ISO 8601 date-time") from None


ROUTES = [
    Route(
        "GET",
        "/v2/pulse",
        get_pulse,
        "token",
        "The site's pulse: one-minute samples of requests, MQTT messages, sign-in failures,"
        " devices online and disk free (staff: the site's or one org's; org admins: their"
        " org's)",
        "system",
        query=QUERY,
        query_types={
            "since": DATETIME
            | {"description": "from when (default: an hour before until; at most 24 hours)"},
            "until": DATETIME | {"description": "to when (default: now): pages further back"},
            "org_id": STR | {"description": "one organization's counts (staff)"},
        },
        responses={200: "PulseInfo"},
        operation_id="get_pulse",
        errors=(400, 403, 404),
        extension=True,
    ),
]
