"""Roles, role access, and the access a role holds. Every route needs a token.

- POST   /v2/roles                               role_permissions.can_create (org or project);
                                                 org_permissions: org admins; project_permissions:
                                                 admins of the role's project
- GET    /v2/roles                               lists the roles the caller may read
- GET    /v2/roles/{role_id}                     read: org/project/group block, group admin of a
                                                 group the role is in, holder with can_read
- PATCH  /v2/roles/{role_id}                     update (and outrank the role's admin powers)
- DELETE /v2/roles/{role_id}                     delete (and outrank the role's admin powers)
- POST, PATCH, DELETE /v2/roles/{role_id}/access/{account_id}
                                                 org admins; admins of the role's project
- GET    /v2/roles/{role_id}/access/{account_id} those, the account itself, readers of the role
- GET    /v2/roles/{role_id}/access/org | projects | groups
                                                 plain read permission on the role

The three lists of what a role holds have routes of their own (the SDK's
`get_role_org_access`, `get_role_project_access`, `get_role_group_access`), declared before
role access: account IDs are 16 characters, so `org`, `projects` and `groups` never name
an account, and a write to those paths reaches role access (which finds no such account).
"""

from __future__ import annotations

from aiohttp import web

from api import access, bodies, listing, params
from api.groups import CRUD
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Handler, Route, principal
from api.schemas import (
    BOOL,
    DESCRIPTION,
    NAME,
    NULLABLE_STR,
    OBJECT,
    TAG_LIST,
    TAGS,
    Schema,
    obj,
)
from edge.tenancy.roles import HELD_TABLES
from edge.tenancy.roles import TABLE as ROLE_TABLE

_LEVEL: dict[str, Schema] = {
    "can_update": BOOL,
    "can_read": BOOL,
    "is_admin": BOOL,
    **{f"{r}_permissions": CRUD for r in ("user", "device", "role", "group")},
}
ORG_PERMISSIONS = obj({**_LEVEL, "project_permissions": CRUD}, title="OrgAccessPermissions")
PROJECT_PERMISSIONS = obj(_LEVEL, title="ProjectAccessPermissions")
_ROLE: dict[str, Schema] = {
    "name": NAME,
    "description": DESCRIPTION,
    "is_delete_protected": BOOL,
    "tags": TAG_LIST,
    "org_permissions": ORG_PERMISSIONS,
    "project_permissions": PROJECT_PERMISSIONS,
    "custom_attributes": OBJECT,
    "restricted_custom_attributes": OBJECT,
}
CREATE_ROLE = obj(
    {**_ROLE, "project_id": NULLABLE_STR, "create_own_access": BOOL},
    ("name",),
    title="CreateRoleBody",
)
PATCH_ROLE = obj({**_ROLE, "is_active": BOOL}, title="PatchRoleBody")
_ACCESS: dict[str, Schema] = {
    "is_delete_protected": BOOL,
    "tags": TAGS,
    "user_permissions": CRUD,
    "device_permissions": CRUD,
    "can_read": BOOL,
    "can_update": BOOL,
}
CREATE_ACCESS = obj(_ACCESS, title="CreateRoleAccessBody")
PATCH_ACCESS = obj({**_ACCESS, "is_active": BOOL}, title="PatchRoleAccessBody")
LISTABLE = listing.Listable(
    "roles",
    ROLE_TABLE.kinds(),
    table=ROLE_TABLE,
    json_columns=ROLE_TABLE.json_columns,
    extras=("group_id", "is_group_admin"),
)
HELD = {
    f"{kind}s": (
        kind,
        listing.Listable(f"role_{kind}_access", table.kinds(), table=table, extras=("ids_only",)),
    )
    for kind, table in HELD_TABLES.items()
}


async def create_role(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_ROLE)
    role_id = await request.app[SERVICES].roles.create(principal(request), body)
    return json_response({"role": {"id": role_id}}, status=201)


async def list_roles(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, extras = listing.parse(request.query, LISTABLE, services.cursors)
    group_id = extras.get("group_id", "").strip() or None
    admin = (
        params.boolean("is_group_admin", extras["is_group_admin"])
        if "is_group_admin" in extras
        else None
    )
    page = await services.roles.list(principal(request), query, group_id, admin)
    return listing.respond("roles", page, query, services.cursors, LISTABLE.resource)


async def get_role(request: web.Request) -> web.Response:
    role = request.app[SERVICES].roles.get(principal(request), request.match_info["role_id"])
    return json_response({"role": role})


async def patch_role(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_ROLE)
    await request.app[SERVICES].roles.patch(principal(request), request.match_info["role_id"], body)
    return json_response({"message": "Success"})


async def delete_role(request: web.Request) -> web.Response:
    flags = params.deletion(request.query)
    await request.app[SERVICES].roles.delete(
        principal(request),
        request.match_info["role_id"],
        force=flags.force,
        permanent=flags.permanent,
    )
    return json_response({"message": "Success"})


_ONE = "/v2/roles/{role_id}"
ACCESS = access.AccessSpec(
    "role",
    _ONE + "/access/{account_id}",
    "account_id",
    "roles",
    CREATE_ACCESS,
    PATCH_ACCESS,
    "a user or device",
)


async def get_role_org_access(request: web.Request) -> web.Response:
    role_id = request.match_info["role_id"]
    org_access = request.app[SERVICES].roles.org_access(principal(request), role_id)
    return json_response({"org_access": org_access})


def _held_access(plural: str) -> Handler:
    """The group or project access a role holds (RoleGroupAccessList, RoleProjectAccessList;
    with `ids_only`, their IDs)."""
    kind, listable = HELD[plural]

    async def held(request: web.Request) -> web.Response:
        services = request.app[SERVICES]
        query, extras = listing.parse(request.query, listable, services.cursors)
        role_id = request.match_info["role_id"]
        page = await services.roles.held_access(principal(request), role_id, kind, query)
        key = f"{kind}_access"
        if "ids_only" in extras and params.boolean("ids_only", extras["ids_only"]):
            page.rows = [row[f"{kind}_id"] for row in page.rows]
            key = f"{kind}_ids"
        return listing.respond(key, page, query, services.cursors, listable.resource)

    return held


def _held_route(plural: str, noun: str) -> Route:
    kind, listable = HELD[plural]
    model = f"Role{kind.capitalize()}AccessList"
    return Route(
        "GET",
        f"{_ONE}/access/{plural}",
        _held_access(plural),
        "token",
        f"List the {noun} access the role holds",
        "roles",
        query=("list", *listable.kinds, *listable.extras),
        query_types=listable.query_types(),
        responses={200: f"{model} | {kind.capitalize()}IdList | ListCounts"},
        operation_id=f"get_role_{kind}_access",  # the SDK's name
    )


ROUTES = [
    Route(
        "POST",
        "/v2/roles",
        create_role,
        "token",
        "Create a role",
        "roles",
        body=CREATE_ROLE,
        responses={201: "NewRoleInfo"},
    ),
    Route(
        "GET",
        "/v2/roles",
        list_roles,
        "token",
        "List roles",
        "roles",
        query=("list", *LISTABLE.kinds, *LISTABLE.extras),
        query_types=LISTABLE.query_types(),
        responses={200: "AdminRoleList | RoleList"},
        operation_id="get_roles",
    ),
    Route(
        "GET",
        _ONE,
        get_role,
        "token",
        "Get a role",
        "roles",
        responses={200: "AdminRoleInfo | RoleInfo"},
        operation_id="get_role_by_id",
    ),
    Route("PATCH", _ONE, patch_role, "token", "Update a role", "roles", body=PATCH_ROLE),
    Route(
        "DELETE",
        _ONE,
        delete_role,
        "token",
        "Delete a role (to the trash unless permanent)",
        "roles",
        query=params.DELETE_QUERY,
        operation_id="delete_role_by_id",
        errors=(409,),
    ),
    # Before the role access routes: `org`, `projects` and `groups` are not account IDs.
    Route(
        "GET",
        f"{_ONE}/access/org",
        get_role_org_access,
        "token",
        "Get the organization access the role holds",
        "roles",
        responses={200: "RoleOrgAccessInfo"},
    ),
    _held_route("projects", "project"),
    _held_route("groups", "group"),
    *access.routes(ACCESS),
]
