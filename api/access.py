"""Access objects over HTTP: one set of handlers for group, project and role access.

Each kind mounts the same four operations under its own path; edge/access/objects.py
decides who may call them (see edge/access/kinds.py for what differs between kinds):

- POST   /v2/groups/{group_id}/access/{grantee_id}        group admins
- GET    ...                                              also readers, and the grantee
- PATCH, DELETE ...                                       group admins
- the same under /v2/projects/{project_id}/access/{grantee_id} (project admins) and
  /v2/roles/{role_id}/access/{account_id} (org admins, and admins of a project-level
  role's project while everything the role holds stays in their reach).

Access objects are erased on delete (`permanent` defaults to true, as the SDK sends it;
there is nothing to restore an access object into).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from api import bodies, params
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Handler, Route, principal
from api.schemas import Schema


@dataclass(frozen=True)
class AccessSpec:
    kind: str  # 'group', 'project' or 'role'
    path: str  # with {<kind>_id} and {grantee}
    grantee: str  # the path's name for the grantee: grantee_id or account_id
    tag: str
    create: Schema
    patch: Schema
    who: str  # "a user or role", "a user or device"

    @property
    def target(self) -> str:
        return f"{self.kind}_id"


def _ids(spec: AccessSpec, request: web.Request) -> tuple[str, str]:
    return request.match_info[spec.target], request.match_info[spec.grantee]


def handlers(spec: AccessSpec) -> dict[str, Handler]:
    async def create(request: web.Request) -> web.Response:
        body = await bodies.read_json(request, spec.create)
        service = request.app[SERVICES].access
        await service.create(principal(request), spec.kind, *_ids(spec, request), body)
        return json_response({"message": "Success"}, status=201)

    async def get(request: web.Request) -> web.Response:
        service = request.app[SERVICES].access
        found = service.get(principal(request), spec.kind, *_ids(spec, request))
        return json_response({f"{spec.kind}_access": found})

    async def patch(request: web.Request) -> web.Response:
        body = await bodies.read_json(request, spec.patch)
        service = request.app[SERVICES].access
        await service.patch(principal(request), spec.kind, *_ids(spec, request), body)
        return json_response({"message": "Success"})

    async def delete(request: web.Request) -> web.Response:
        flags = params.deletion(request.query, permanent_by_default=True)
        service = request.app[SERVICES].access
        target, grantee = _ids(spec, request)
        await service.delete(principal(request), spec.kind, target, grantee, force=flags.force)
        return json_response({"message": "Success"})

    return {"POST": create, "GET": get, "PATCH": patch, "DELETE": delete}


def routes(spec: AccessSpec) -> list[Route]:
    """The four routes of one kind of access."""
    made = handlers(spec)
    noun = f"{spec.kind} access"
    model = f"{spec.kind.capitalize()}AccessInfo"
    return [
        Route(
            "POST",
            spec.path,
            made["POST"],
            "token",
            f"Give {spec.who} access to a {spec.kind}",
            spec.tag,
            body=spec.create,
            responses={201: "Success"},
            operation_id=f"create_{spec.kind}_access",
            errors=(409,),
        ),
        Route(
            "GET",
            spec.path,
            made["GET"],
            "token",
            f"Get a {noun}",
            spec.tag,
            responses={200: f"Admin{model} | {model}"},
            operation_id=f"get_{spec.kind}_access_by_id",
        ),
        Route(
            "PATCH",
            spec.path,
            made["PATCH"],
            "token",
            f"Change a {noun}",
            spec.tag,
            body=spec.patch,
            # the SDK's name for roles' (patch_group_access, patch_project_access)
            operation_id=f"patch_{spec.kind}_access" + ("_by_id" if spec.kind == "role" else ""),
        ),
        Route(
            "DELETE",
            spec.path,
            made["DELETE"],
            "token",
            f"Remove a {noun}",
            spec.tag,
            query=params.DELETE_QUERY,
            operation_id=f"delete_{spec.kind}_access_by_id",
            errors=(409,),
        ),
    ]
