"""Projects and the caller's own project ("my project").

Every route needs a token; the projects service decides who may do what (org admins,
org `project_permissions`, project admins, and project access `can_read`/`can_update`).
"""

from __future__ import annotations

from aiohttp import web

from api import bodies, listing, params
from api.keys import SERVICES
from api.orgs import SETTING_SCHEMAS
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import ALIAS, BOOL, DESCRIPTION, NAME, TAG_LIST, Schema, obj
from edge.tenancy.projects import SETTINGS
from edge.tenancy.projects import TABLE as PROJECT_TABLE

_SETTINGS: dict[str, Schema] = {n: SETTING_SCHEMAS[n] for n in SETTINGS}
_COLUMNS: dict[str, Schema] = {
    "name": NAME,
    "alias": ALIAS,
    "description": DESCRIPTION,
    "tags": TAG_LIST,
    "is_delete_protected": BOOL,
}
CREATE_PROJECT = obj(
    {**_COLUMNS, **_SETTINGS, "create_own_access": BOOL}, ("name",), title="CreateProjectBody"
)
PATCH_PROJECT = obj({**_COLUMNS, **_SETTINGS, "is_active": BOOL}, title="PatchProjectBody")
PATCH_MY_PROJECT = obj({**_COLUMNS, **_SETTINGS}, title="PatchProjectSettingsBody")
LISTABLE = listing.Listable(
    "projects", PROJECT_TABLE.kinds(), table=PROJECT_TABLE, default_order="created_date"
)


async def create_project(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_PROJECT)
    project_id = await request.app[SERVICES].projects.create(principal(request), body)
    return json_response({"project": {"id": project_id}}, status=201)


async def list_projects(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.projects.list(principal(request), query)
    return listing.respond("projects", page, query, services.cursors, LISTABLE.resource)


async def get_project(request: web.Request) -> web.Response:
    projects = request.app[SERVICES].projects
    project = projects.get(principal(request), request.match_info["project_id"])
    return json_response({"project": project})


async def patch_project(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_PROJECT)
    projects = request.app[SERVICES].projects
    await projects.patch(principal(request), request.match_info["project_id"], body)
    return json_response({"message": "Success"})


async def delete_project(request: web.Request) -> web.Response:
    flags = params.deletion(request.query)
    await request.app[SERVICES].projects.delete(
        principal(request),
        request.match_info["project_id"],
        force=flags.force,
        permanent=flags.permanent,
    )
    return json_response({"message": "Success"})


async def get_my_project(request: web.Request) -> web.Response:
    project = request.app[SERVICES].projects.mine(principal(request))
    return json_response({"project": project})


async def patch_my_project(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_MY_PROJECT)
    await request.app[SERVICES].projects.patch_mine(principal(request), body)
    return json_response({"message": "Success"})


ROUTES = [
    Route(
        "POST",
        "/v2/projects",
        create_project,
        "token",
        "Create a project (org admins, org project_permissions.can_create)",
        "projects",
        body=CREATE_PROJECT,
        responses={201: "NewProjectInfo"},
        errors=(409,),
    ),
    Route(
        "GET",
        "/v2/projects",
        list_projects,
        "token",
        "List the projects the caller may read",
        "projects",
        query=("list", *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "AdminProjectList | ProjectList"},
        operation_id="get_projects",
    ),
    Route(
        "GET",
        "/v2/projects/{project_id}",
        get_project,
        "token",
        "Get a project (readers of the project)",
        "projects",
        responses={200: "AdminProjectInfo | ProjectInfo"},
        operation_id="get_project_by_id",
    ),
    Route(
        "PATCH",
        "/v2/projects/{project_id}",
        patch_project,
        "token",
        "Update a project (updaters; suspending needs an admin)",
        "projects",
        body=PATCH_PROJECT,
        errors=(409,),
    ),
    Route(
        "DELETE",
        "/v2/projects/{project_id}",
        delete_project,
        "token",
        "Delete a project (admins, org project_permissions.can_delete; force: admins)",
        "projects",
        query=params.DELETE_QUERY,
        operation_id="delete_project_by_id",
        errors=(409,),
    ),
    Route(
        "GET",
        "/v2/my-project",
        get_my_project,
        "token",
        "Settings of the project the caller is signed in to",
        "my_project",
        responses={200: "ProjectInfo"},
        operation_id="get_my_project_settings",
        errors=(404,),
    ),
    Route(
        "PATCH",
        "/v2/my-project",
        patch_my_project,
        "token",
        "Update the settings of the caller's project (its admins)",
        "my_project",
        body=PATCH_MY_PROJECT,
        operation_id="patch_my_project_settings",
        errors=(404, 409),
    ),
]
