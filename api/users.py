"""Users of the caller's organization.

Every route needs a token of the organization (staff: with scope=<org>); what the caller
may do to which user is decided by the permission engine (docs/permissions.md):

- POST   /v2/users                     user create permission (org, or the new user's project)
- GET    /v2/users                     lists the users the caller may read
- GET    /v2/users/{user_id}           read permission, or the user themselves
- PATCH  /v2/users/{user_id}           update permission, or the user themselves
- DELETE /v2/users/{user_id}           delete permission; `force` for admins only
- PUT    /v2/users/{user_id}/picture   update permission, or the user themselves
- DELETE /v2/users/{user_id}/picture   update permission, or the user themselves
"""

from __future__ import annotations

from aiohttp import web

from api import account_filters, bodies, listing, params, uploads
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import (
    BOOL,
    EMAIL,
    LOCALE,
    OBJECT,
    PASSWORD,
    PHONE,
    PROFILE_NAME,
    STR,
    TAG_LIST,
    TIME_ZONE,
    USERNAME,
    Schema,
    nullable,
    obj,
    text,
)
from edge.accounts.pictures import MAX_BYTES
from edge.accounts.user_kind import TABLE
from edge.kernel import fields

CRUD = obj({name: BOOL for name in ("can_create", "can_read", "can_update", "can_delete")})
_LEVEL = {"is_admin": BOOL, "can_read": BOOL, "can_update": BOOL}
ORG_PERMISSIONS = obj(
    {
        **_LEVEL,
        **{f"{r}_permissions": CRUD for r in ("user", "device", "role", "group", "project")},
    },
    title="OrgAccessPermissions",
)
PROJECT_PERMISSIONS = obj(
    {**_LEVEL, **{f"{r}_permissions": CRUD for r in ("user", "device", "role", "group")}},
    title="ProjectAccessPermissions",
)
_PROFILE: dict[str, Schema] = {
    "username": USERNAME,
    "email": EMAIL,
    "phone_number": PHONE,
    **dict.fromkeys(("first_name", "middle_name", "last_name", "nickname"), PROFILE_NAME),
    "picture": nullable(text(fields.MAX_URL, required=False)),
    "locale": LOCALE,
    "zoneinfo": TIME_ZONE,
    "tags": TAG_LIST,
    "is_active": BOOL,
    "is_delete_protected": BOOL,
    "custom_attributes": OBJECT,
    "restricted_custom_attributes": OBJECT,
    "org_permissions": ORG_PERMISSIONS,
    "project_permissions": PROJECT_PERMISSIONS,
}
CREATE_USER = obj(
    {**_PROFILE, "project_id": STR, "password": PASSWORD, "temp_password": PASSWORD},
    ("email",),
    title="CreateUserBody",
)
PATCH_USER = obj(_PROFILE, title="PatchUserBody")
LISTABLE = listing.Listable(
    "users",
    TABLE.kinds(),
    table=TABLE,
    json_columns=TABLE.json_columns,
    extras=(*account_filters.EXTRAS, "exclude_admins"),
)


async def create_user(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_USER)
    user_id = await request.app[SERVICES].users.create(principal(request), body)
    return json_response({"user": {"id": user_id}}, status=201)


async def list_users(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, extras = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.users.list(principal(request), query, account_filters.filters(extras))
    return listing.respond("users", page, query, services.cursors, LISTABLE.resource)


async def get_user(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    user = services.users.get(principal(request), request.match_info["user_id"])
    return json_response({"user": user})


async def patch_user(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_USER)
    await request.app[SERVICES].users.patch(principal(request), request.match_info["user_id"], body)
    return json_response({"message": "Success"})


async def delete_user(request: web.Request) -> web.Response:
    flags = params.deletion(request.query)
    await request.app[SERVICES].users.delete(
        principal(request),
        request.match_info["user_id"],
        force=flags.force,
        permanent=flags.permanent,
    )
    return json_response({"message": "Success"})


async def set_user_picture(request: web.Request) -> web.Response:
    data = await uploads.read_file(request, "file", MAX_BYTES)
    await request.app[SERVICES].pictures.set_for(
        principal(request), request.match_info["user_id"], data
    )
    return json_response({"message": "Success"})


async def delete_user_picture(request: web.Request) -> web.Response:
    await request.app[SERVICES].pictures.delete_for(
        principal(request), request.match_info["user_id"]
    )
    return json_response({"message": "Success"})


PICTURE_FORM = obj({"file": {"type": "string", "format": "binary"}}, ("file",))

ROUTES = [
    Route(
        "POST",
        "/v2/users",
        create_user,
        "token",
        "Create a user",
        "users",
        body=CREATE_USER,
        responses={201: "NewUserInfo"},
        errors=(409,),
    ),
    Route(
        "GET",
        "/v2/users",
        list_users,
        "token",
        "List users",
        "users",
        query=("list", *account_filters.EXTRAS, "exclude_admins", *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "AdminUserList | UserList | AnonUserList"},
        operation_id="get_users",
    ),
    Route(
        "GET",
        "/v2/users/{user_id}",
        get_user,
        "token",
        "Get a user",
        "users",
        responses={200: "AdminUserInfo | UserInfo | AnonUserInfo"},
        operation_id="get_user_by_id",
    ),
    Route(
        "PATCH",
        "/v2/users/{user_id}",
        patch_user,
        "token",
        "Update, suspend or reactivate a user",
        "users",
        body=PATCH_USER,
        errors=(409,),
    ),
    Route(
        "DELETE",
        "/v2/users/{user_id}",
        delete_user,
        "token",
        "Delete a user",
        "users",
        query=("force", "permanent"),
        operation_id="delete_user_by_id",
        errors=(409,),
    ),
    Route(
        "PUT",
        "/v2/users/{user_id}/picture",
        set_user_picture,
        "token",
        "Set a user's profile picture (JPEG or PNG, at most 10 MB, at least 24x24 px)",
        "users",
        body=PICTURE_FORM,
        body_type="multipart",
        errors=(400, 406, 408, 413),
    ),
    Route(
        "DELETE",
        "/v2/users/{user_id}/picture",
        delete_user_picture,
        "token",
        "Remove a user's profile picture",
        "users",
    ),
]
