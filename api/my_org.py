"""The caller's own organization.

- GET   /v2/my-org   any member of the organization (staff: with scope=<org>)
- PATCH /v2/my-org   org admins; staff-only settings are not part of this body
"""

from __future__ import annotations

from aiohttp import web

from api import bodies
from api.keys import SERVICES
from api.orgs import SETTING_SCHEMAS
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import BOOL, DESCRIPTION, ORG_NAME, Schema, obj
from edge.tenancy.my_org import PATCHABLE_COLUMNS, PATCHABLE_SETTINGS

_COLUMN_TYPES: dict[str, Schema] = {
    "name": ORG_NAME,
    "description": DESCRIPTION,
    "is_delete_protected": BOOL,
}
PATCH_MY_ORG = obj(
    {
        **{name: _COLUMN_TYPES[name] for name in PATCHABLE_COLUMNS},
        **{name: SETTING_SCHEMAS[name] for name in PATCHABLE_SETTINGS},
    },
    title="PatchOrgSettingsBody",
)


async def get_my_org(request: web.Request) -> web.Response:
    return json_response({"org": request.app[SERVICES].my_org.get(principal(request))})


async def patch_my_org(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_MY_ORG)
    await request.app[SERVICES].my_org.patch(principal(request), body)
    return json_response({"message": "Success"})


ROUTES = [
    Route(
        "GET",
        "/v2/my-org",
        get_my_org,
        "token",
        "Get the settings of the caller's organization",
        "my_organization",
        responses={200: "OrgInfo"},
        operation_id="get_my_org_settings",
    ),
    Route(
        "PATCH",
        "/v2/my-org",
        patch_my_org,
        "token",
        "Change the settings of the caller's organization (org admins)",
        "my_organization",
        body=PATCH_MY_ORG,
        operation_id="patch_my_org_settings",
    ),
]
