"""Project access: a user's or role's access to a project, keyed by the grantee's ID.

Every route needs a token. Only admins of the project create, change or delete access;
readers of the project (and the grantee) may read it; `is_active` is shown to admins only
and cannot be set on create.
"""

from __future__ import annotations

from aiohttp import web

from api import bodies
from api.keys import SERVICES
from api.projects import delete_flags
from api.routing import Route, principal
from api.schemas import BOOL, TAGS, Schema, obj

CRUD = obj({f"can_{a}": BOOL for a in ("create", "read", "update", "delete")})
_FIELDS: dict[str, Schema] = {
    "is_admin": BOOL,
    "can_read": BOOL,
    "can_update": BOOL,
    "is_delete_protected": BOOL,
    "tags": TAGS,
    **{f"{r}_permissions": CRUD for r in ("user", "device", "group", "role")},
}
CREATE_ACCESS = obj(_FIELDS, title="CreateProjectAccessBody")
PATCH_ACCESS = obj({**_FIELDS, "is_active": BOOL}, title="PatchProjectAccessBody")
PATH = "/v2/projects/{project_id}/access/{grantee_id}"


def _ids(request: web.Request) -> tuple[str, str]:
    return request.match_info["project_id"], request.match_info["grantee_id"]


async def create_access(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_ACCESS)
    await request.app[SERVICES].project_access.create(principal(request), *_ids(request), body)
    return web.json_response({"message": "Success"}, status=201)


async def get_access(request: web.Request) -> web.Response:
    access = request.app[SERVICES].project_access.get(principal(request), *_ids(request))
    return web.json_response({"project_access": access})


async def patch_access(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_ACCESS)
    await request.app[SERVICES].project_access.patch(principal(request), *_ids(request), body)
    return web.json_response({"message": "Success"})


async def delete_access(request: web.Request) -> web.Response:
    force = delete_flags(request)
    service = request.app[SERVICES].project_access
    await service.delete(principal(request), *_ids(request), force=force)
    return web.json_response({"message": "Success"})


ROUTES = [
    Route(
        "POST",
        PATH,
        create_access,
        "token",
        "Give a user or role access to a project (project admins)",
        "projects",
        body=CREATE_ACCESS,
        responses={201: "Success"},
    ),
    Route(
        "GET",
        PATH,
        get_access,
        "token",
        "Get a project access (readers of the project, the grantee)",
        "projects",
        responses={200: "ProjectAccessInfo"},
    ),
    Route(
        "PATCH",
        PATH,
        patch_access,
        "token",
        "Change a project access (project admins)",
        "projects",
        body=PATCH_ACCESS,
    ),
    Route(
        "DELETE",
        PATH,
        delete_access,
        "token",
        "Remove a project access (project admins)",
        "projects",
        query=("permanent", "force"),
    ),
]
