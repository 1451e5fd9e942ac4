"""The trash: deleted users, groups, roles and projects, restorable for a while.

Neither the interface nor the SDK names these operations; they are this server's own
(docs/lifecycle.md). Org admins see the whole org's trash; project admins see what was
deleted from their projects.

- GET    /v2/trash                      list (kind, name, project_id, deleted_date, ...)
- GET    /v2/trash/{entry_id}           one entry (the ID of the deleted record)
- POST   /v2/trash/{entry_id}/restore   put it back (409 when its name is taken now)
- DELETE /v2/trash/{entry_id}           erase it now
"""

from __future__ import annotations

from aiohttp import web

from api import listing
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Route, principal
from edge.tenancy.trash import TABLE

LISTABLE = listing.Listable("trash", TABLE.kinds(), table=TABLE, default_order="deleted_date")


async def list_trash(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.trash.list(principal(request), query)
    return listing.respond("trash", page, query, services.cursors, LISTABLE.resource)


async def get_entry(request: web.Request) -> web.Response:
    entry = request.app[SERVICES].trash.get(principal(request), request.match_info["entry_id"])
    return json_response({"trash": entry})


async def restore_entry(request: web.Request) -> web.Response:
    await request.app[SERVICES].trash.restore(principal(request), request.match_info["entry_id"])
    return json_response({"message": "Success"})


async def erase_entry(request: web.Request) -> web.Response:
    await request.app[SERVICES].trash.erase(principal(request), request.match_info["entry_id"])
    return json_response({"message": "Success"})


_ONE = "/v2/trash/{entry_id}"
ROUTES = [
    Route(
        "GET",
        "/v2/trash",
        list_trash,
        "token",
        "List deleted records that can still be restored (admins)",
        "trash",
        query=("list", *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "TrashList"},
        operation_id="get_trash",
        extension=True,
    ),
    Route(
        "GET",
        _ONE,
        get_entry,
        "token",
        "Get a deleted record",
        "trash",
        operation_id="get_trash_entry",
        extension=True,
        responses={200: "TrashInfo"},
    ),
    Route(
        "POST",
        f"{_ONE}/restore",
        restore_entry,
        "token",
        "Restore a deleted record and what belonged to it",
        "trash",
        operation_id="restore_trash_entry",
        extension=True,
        errors=(409,),
    ),
    Route(
        "DELETE",
        _ONE,
        erase_entry,
        "token",
        "Erase a deleted record now",
        "trash",
        operation_id="erase_trash_entry",
        extension=True,
    ),
]
