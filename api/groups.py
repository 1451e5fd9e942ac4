"""Groups and group access. Every route needs a token; the group service checks who may act.

- POST   /v2/groups                               group_permissions.can_create (org or project)
- GET    /v2/groups                               lists the groups the caller may read
- GET    /v2/groups/{group_id}                    read: org/project block, group admin, can_read
- PATCH  /v2/groups/{group_id}                    update: same, or the access's can_update
- DELETE /v2/groups/{group_id}                    delete: org/project block or group admin
- POST, GET, PATCH, DELETE /v2/groups/{group_id}/access/{grantee_id}
                                                  group admins (GET: also readers, the grantee);
                                                  the handlers are api/access.py's
"""

from __future__ import annotations

from aiohttp import web

from api import access, bodies, listing, params
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import BOOL, DESCRIPTION, NAME, NULLABLE_STR, TAG_LIST, TAGS, Schema, obj
from edge.tenancy.groups import TABLE as GROUP_TABLE

CRUD = obj({name: BOOL for name in ("can_create", "can_read", "can_update", "can_delete")})
PATH_PERMISSIONS: Schema = {
    "type": "object",
    "additionalProperties": obj(
        {name: BOOL for name in ("can_write", "can_read", "can_update", "can_delete")}
    ),
}
_GROUP: dict[str, Schema] = {
    "name": NAME,
    "description": DESCRIPTION,
    "is_delete_protected": BOOL,
    "tags": TAG_LIST,
    "require_delete_permission_to_put_data": BOOL,
}
CREATE_GROUP = obj(
    {**_GROUP, "project_id": NULLABLE_STR, "create_own_access": BOOL},
    ("name",),
    title="CreateGroupBody",
)
PATCH_GROUP = obj({**_GROUP, "is_active": BOOL}, title="PatchGroupBody")
_ACCESS: dict[str, Schema] = {
    "is_delete_protected": BOOL,
    "tags": TAGS,
    "user_permissions": CRUD,
    "device_permissions": CRUD,
    "role_permissions": CRUD,
    "can_read": BOOL,
    "can_update": BOOL,
    "is_admin": BOOL,
    "data_paths": PATH_PERMISSIONS,
    "file_paths": PATH_PERMISSIONS,
}
CREATE_ACCESS = obj(_ACCESS, title="CreateGroupAccessBody")
PATCH_ACCESS = obj({**_ACCESS, "is_active": BOOL}, title="PatchGroupAccessBody")
LISTABLE = listing.Listable("groups", GROUP_TABLE.kinds(), table=GROUP_TABLE)
ACCESS = access.AccessSpec(
    "group",
    "/v2/groups/{group_id}/access/{grantee_id}",
    "grantee_id",
    "groups",
    CREATE_ACCESS,
    PATCH_ACCESS,
    "a user, device or role",
)


async def create_group(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_GROUP)
    group_id = await request.app[SERVICES].groups.create(principal(request), body)
    return json_response({"group": {"id": group_id}}, status=201)


async def list_groups(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.groups.list(principal(request), query)
    return listing.respond("groups", page, query, services.cursors, LISTABLE.resource)


async def get_group(request: web.Request) -> web.Response:
    group = request.app[SERVICES].groups.get(principal(request), request.match_info["group_id"])
    return json_response({"group": group})


async def patch_group(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_GROUP)
    groups = request.app[SERVICES].groups
    await groups.patch(principal(request), request.match_info["group_id"], body)
    return json_response({"message": "Success"})


async def delete_group(request: web.Request) -> web.Response:
    flags = params.deletion(request.query)
    await request.app[SERVICES].groups.delete(
        principal(request),
        request.match_info["group_id"],
        force=flags.force,
        permanent=flags.permanent,
    )
    return json_response({"message": "Success"})


_ONE = "/v2/groups/{group_id}"
ROUTES = [
    Route(
        "POST",
        "/v2/groups",
        create_group,
        "token",
        "Create a group",
        "groups",
        body=CREATE_GROUP,
        responses={201: "NewGroupInfo"},
    ),
    Route(
        "GET",
        "/v2/groups",
        list_groups,
        "token",
        "List groups",
        "groups",
        query=("list", *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "AdminGroupList | GroupList"},
        operation_id="get_groups",
    ),
    Route(
        "GET",
        _ONE,
        get_group,
        "token",
        "Get a group",
        "groups",
        responses={200: "AdminGroupInfo | GroupInfo"},
        operation_id="get_group_by_id",
    ),
    Route("PATCH", _ONE, patch_group, "token", "Update a group", "groups", body=PATCH_GROUP),
    Route(
        "DELETE",
        _ONE,
        delete_group,
        "token",
        "Delete a group (to the trash unless permanent)",
        "groups",
        query=params.DELETE_QUERY,
        operation_id="delete_group_by_id",
        errors=(409,),
    ),
    *access.routes(ACCESS),
]
