"""The audit log (docs/audit.md).

Routes:
- GET /v2/audit   "token": org admins and scoped staff (their organization's events),
                  staff without a scope (every event); other users and devices get
                  403. The shared list engine: filters on action, actor_id,
                  actor_name, actor_kind, target_id, target_name, target_kind,
                  org_id, client, request_id and created_date ranges; pages.

`/v2/audit` rather than under `/v2/orgs/{org_id}`: an org admin reads it without knowing
their org's ID, and unscoped staff read the events of the site (sign-ins of staff, events of
organizations since deleted) that belong to no organization.
"""

from __future__ import annotations

from aiohttp import web

from api import listing
from api.keys import SERVICES
from api.routing import Route, principal
from api.schemas import INT, STR, Schema, obj
from edge.kernel.audit import TABLE, present

# The trail is long and has no full-text index: `search` is a 400; its filters
# (`action`, `actor_name_contains`, `target_name_contains`, ...) find what is wanted.
LISTABLE = listing.Listable(
    "audit_events", TABLE.kinds(), default_order="created_date", table=TABLE, searchable=False
)
_EVENT: Schema = obj(
    {
        "id": STR,
        "created_date": {"type": "string", "format": "date-time"},
        "org_id": STR,
        "action": STR,
        "actor_kind": {
            "type": "string",
            "enum": ["staff", "user", "device", "anonymous", "operator", "system"],
        },
        "actor_id": STR,
        "actor_name": STR,
        "target_kind": STR,
        "target_id": STR,
        "target_name": STR,
        "client": STR,
        "request_id": STR,
        "details": {"type": "object"},
    },
    ("id", "created_date", "action", "actor_kind", "details"),
    title="AuditEvent",
)
MODELS: dict[str, Schema] = {
    "AuditEvent": _EVENT,
    "AuditEventList": obj(
        {
            "audit_events": {"type": "array", "items": _EVENT},
            "last_evaluated_key": {"type": "object"},
            "object_count": INT,
            "page_count": INT,
        }
    ),
}


async def list_events(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.audit.list(principal(request), query)
    page.rows = [present(row) for row in page.rows]
    return listing.respond("audit_events", page, query, services.cursors, LISTABLE.resource)


ROUTES = [
    Route(
        "GET",
        "/v2/audit",
        list_events,
        "token",
        "The audit log: security-relevant actions (org admins: their organization's)",
        "audit",
        query=(*LISTABLE.common(), *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "AuditEventList"},
        operation_id="get_audit_events",
        extension=True,
    ),
]
