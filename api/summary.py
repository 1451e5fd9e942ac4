"""The caller's overview: GET /v2/summary, an extension (docs/console.md).

- GET /v2/summary   any signed-in caller; each count is what the caller's own list request
                    would count (edge/summary/service.py), the org's content for its admins

The console's first page reads it; any client may.
"""

from __future__ import annotations

from aiohttp import web

from api.keys import SERVICES
from api.model_fields import INT, Schema, model, one
from api.responses import NO_STORE, json_response
from api.routing import Route, principal

_COUNTS = {
    "orgs": "organizations (staff)",
    "projects": "projects the caller may list",
    "users": "users the caller may list",
    "groups": "groups the caller may list",
    "roles": "roles the caller may list",
    "devices": "devices the caller may list",
    "devices_online": "of those, connected now",
    "data_entries": "data entries of the org's groups (org admins)",
    "files": "files of the org's groups (org admins)",
    "file_bytes": "their bytes (org admins)",
    "open_tunnels": "tunnels open now (org admins)",
}
MODELS: dict[str, Schema] = {
    "Summary": model(
        "Counts within the caller's rights; a count the caller may not see is left out",
        " ".join(_COUNTS),
        **{name: INT | {"description": text} for name, text in _COUNTS.items()},
    ),
    "SummaryInfo": one("The caller's overview", "summary", "Summary"),
}


async def get_summary(request: web.Request) -> web.Response:
    counts = await request.app[SERVICES].summary.of(principal(request))
    return json_response({"summary": counts}, headers=NO_STORE)


ROUTES = [
    Route(
        "GET",
        "/v2/summary",
        get_summary,
        "token",
        "Counts within the caller's rights: orgs (staff), projects, users, groups, roles,"
        " devices and those online; for org admins the org's data entries, files, bytes and"
        " open tunnels",
        "system",
        responses={200: "SummaryInfo"},
        operation_id="get_summary",
        extension=True,
    ),
]
