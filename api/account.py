"""The caller's own account. Every route needs a token; what it shows is the caller's own.

- GET    /v2/account/access/org              the caller's org access object
- GET    /v2/account/access/projects         the caller's project access (and their roles')
- GET    /v2/account/access/groups           the caller's group access (and their roles')
- GET    /v2/account/access/roles            the caller's role access
- GET    /v2/account/access/current-session  the session's permissions, merged through roles
- GET    /v2/account/dashboard               the caller's dashboard ({"widgets": []} at first)
- PUT    /v2/account/dashboard               replace it
- PUT    /v2/account/picture                 set the caller's profile picture (multipart `file`)
- DELETE /v2/account/picture                 remove it

POST and PUT /v2/account/sms/verification were removed from the interface: not routed, 404.
"""

from __future__ import annotations

from aiohttp import web

from api import bodies, listing, params, uploads
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Handler, Route, principal
from api.schemas import OBJECT, Schema, integer, obj, text
from edge.accounts.pictures import MAX_BYTES
from edge.tenancy.account import MAX_WIDGETS, ORDER_RANGE, TABLES, AccessOptions

_LISTS = {
    "project": listing.Listable(
        "account_project_access",
        TABLES["project"].kinds(),
        table=TABLES["project"],
        extras=("ids_only",),
    ),
    "group": listing.Listable(
        "account_group_access",
        TABLES["group"].kinds(),
        table=TABLES["group"],
        extras=("ids_only", "include_inactive_groups"),
    ),
    "role": listing.Listable(
        "account_role_access",
        TABLES["role"].kinds(),
        table=TABLES["role"],
        extras=("ids_only", "group_id"),
    ),
}
WIDGET: Schema = {
    "type": "object",
    "properties": {
        # edge/tenancy/account.py's rules
        "order": integer(*ORDER_RANGE),
        "widget_type": text(),
        "widget_title": text(required=False),
        "config": OBJECT,
    },
    "required": ["order", "widget_type", "widget_title", "config"],
}
DASHBOARD = obj(
    {"widgets": {"type": "array", "items": WIDGET, "maxItems": MAX_WIDGETS}},
    ("widgets",),
    title="DashboardConfig",
)
PICTURE_FORM = obj({"file": {"type": "string", "format": "binary"}}, ("file",))


async def get_org_access(request: web.Request) -> web.Response:
    return json_response(request.app[SERVICES].account.org_access(principal(request)))


def _lister(kind: str) -> Handler:
    listable = _LISTS[kind]

    async def handler(request: web.Request) -> web.Response:
        services = request.app[SERVICES]
        query, extras = listing.parse(request.query, listable, services.cursors)
        options = AccessOptions(
            ids_only=params.flag(extras, "ids_only"),
            include_inactive_groups=params.flag(extras, "include_inactive_groups"),
            group_id=extras.get("group_id") or None,
        )
        page = await services.account.access(principal(request), kind, query, options)
        key = f"{kind}_ids" if options.ids_only else f"{kind}_access"
        return listing.respond(key, page, query, services.cursors, listable.resource)

    return handler


async def get_current_session(request: web.Request) -> web.Response:
    return json_response(request.app[SERVICES].account.current_session(principal(request)))


async def get_dashboard(request: web.Request) -> web.Response:
    return json_response(request.app[SERVICES].account.dashboard(principal(request)))


async def set_dashboard(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, DASHBOARD)
    await request.app[SERVICES].account.set_dashboard(principal(request), body)
    return json_response({"message": "Success"})


async def set_picture(request: web.Request) -> web.Response:
    data = await uploads.read_file(request, "file", MAX_BYTES)
    await request.app[SERVICES].pictures.set_own(principal(request), data)
    return json_response({"message": "Success"})


async def delete_picture(request: web.Request) -> web.Response:
    await request.app[SERVICES].pictures.delete_own(principal(request))
    return json_response({"message": "Success"})


def _access_route(kind: str, plural: str, model: str) -> Route:
    listable = _LISTS[kind]
    return Route(
        "GET",
        f"/v2/account/access/{plural}",
        _lister(kind),
        "token",
        f"List the {kind} access the caller holds",
        "account",
        query=("list", *listable.extras, *listable.kinds),
        query_types=listable.query_types(),
        responses={200: model},
        operation_id=f"get_account_{kind}_access",
    )


ROUTES = [
    Route(
        "GET",
        "/v2/account/access/org",
        get_org_access,
        "token",
        "Get the caller's org access",
        "account",
        responses={200: "AccountOrgAccessInfo"},
        operation_id="get_account_org_access",
    ),
    _access_route(
        "project", "projects", "AccountProjectAccessList | AdminAccountProjectAccessList"
    ),
    _access_route("group", "groups", "AccountGroupAccessList | AdminAccountGroupAccessList"),
    _access_route(
        "role",
        "roles",
        "AccountRoleAccessList | AdminAccountRoleAccessList | RoleIdList | ListCounts",
    ),
    Route(
        "GET",
        "/v2/account/access/current-session",
        get_current_session,
        "token",
        "Get the permissions of the caller's session, merged through roles",
        "account",
        responses={200: "CurrentSessionAccessInfo"},
        operation_id="get_current_session_access",
    ),
    Route(
        "GET",
        "/v2/account/dashboard",
        get_dashboard,
        "token",
        "Get the caller's dashboard configuration",
        "account",
        responses={200: "DashboardConfig"},
        operation_id="get_dashboard_config",
    ),
    Route(
        "PUT",
        "/v2/account/dashboard",
        set_dashboard,
        "token",
        "Replace the caller's dashboard configuration",
        "account",
        body=DASHBOARD,
        operation_id="set_dashboard_config",
    ),
    Route(
        "PUT",
        "/v2/account/picture",
        set_picture,
        "token",
        "Set the caller's profile picture (JPEG or PNG, at most 10 MB, at least 24x24 px)",
        "account",
        body=PICTURE_FORM,
        body_type="multipart",
        operation_id="set_account_picture",
        errors=(400, 406, 408, 413),
    ),
    Route(
        "DELETE",
        "/v2/account/picture",
        delete_picture,
        "token",
        "Remove the caller's profile picture",
        "account",
        operation_id="delete_account_picture",
    ),
]
