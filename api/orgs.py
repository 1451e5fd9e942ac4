"""Organizations (staff only)."""

from __future__ import annotations

from aiohttp import web

from api import bodies, listing, params
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import (
    ALIAS,
    BOOL,
    DESCRIPTION,
    EMAIL,
    LOCALE,
    OBJECT,
    ORG_NAME,
    TAG_LIST,
    Schema,
    integer,
    obj,
)
from edge.tenancy.orgs import TABLE as ORG_TABLE
from edge.tenancy.settings import LOGIN_FIELDS, RANGES, SETTINGS

# Each setting's schema: its type and the rule edge/tenancy/settings.py holds it to.
SETTING_SCHEMAS: dict[str, Schema] = {
    **{name: BOOL for name, (default, _) in SETTINGS.items() if isinstance(default, bool)},
    **{name: integer(low, high) for name, (low, high) in RANGES.items()},
    "default_locale": LOCALE,
    "default_from_address": EMAIL,
    "allowed_login_fields": {
        "type": "array",
        "items": {"type": "string", "enum": list(LOGIN_FIELDS)},
        "minItems": 1,
    },
    "custom_settings": OBJECT,
    "ui_config": OBJECT,
}
_FIELDS: dict[str, Schema] = {
    "name": ORG_NAME,
    "alias": ALIAS,
    "description": DESCRIPTION,
    "tags": TAG_LIST,
    "is_active": BOOL,
    "is_delete_protected": BOOL,
    **{name: SETTING_SCHEMAS[name] for name in SETTINGS},
}
CREATE_ORG = obj(_FIELDS, ("name",), title="CreateOrgBody")
PATCH_ORG = obj(_FIELDS, title="PatchOrgBody")
LISTABLE = listing.Listable(
    "orgs", ORG_TABLE.kinds(), table=ORG_TABLE, default_order="created_date"
)


async def create_org(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_ORG)
    org_id = await request.app[SERVICES].orgs.create(principal(request), body)
    return json_response({"org": {"id": org_id}}, status=201)


async def list_orgs(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.orgs.list(principal(request), query)
    return listing.respond("orgs", page, query, services.cursors, LISTABLE.resource)


async def get_org(request: web.Request) -> web.Response:
    org = request.app[SERVICES].orgs.get(principal(request), request.match_info["org_id"])
    return json_response({"org": org})


async def patch_org(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_ORG)
    await request.app[SERVICES].orgs.patch(principal(request), request.match_info["org_id"], body)
    return json_response({"message": "Success"})


async def delete_org(request: web.Request) -> web.Response:
    force = params.flag(request.query, "force")
    await request.app[SERVICES].orgs.delete(
        principal(request), request.match_info["org_id"], force=force
    )
    return json_response({"message": "Success"})


ROUTES = [
    Route(
        "POST",
        "/v2/orgs",
        create_org,
        "staff",
        "Create an organization",
        "orgs",
        body=CREATE_ORG,
        responses={201: "NewOrgInfo"},
        operation_id="create_org",
        errors=(409,),
    ),
    Route(
        "GET",
        "/v2/orgs",
        list_orgs,
        "staff",
        "List organizations",
        "orgs",
        query=("list", *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "OrgList"},
        operation_id="get_orgs",
    ),
    Route(
        "GET",
        "/v2/orgs/{org_id}",
        get_org,
        "staff",
        "Get an organization",
        "orgs",
        responses={200: "OrgInfo"},
        operation_id="get_org_by_id",
    ),
    Route(
        "PATCH",
        "/v2/orgs/{org_id}",
        patch_org,
        "staff",
        "Update an organization",
        "orgs",
        body=PATCH_ORG,
        errors=(409,),
    ),
    Route(
        "DELETE",
        "/v2/orgs/{org_id}",
        delete_org,
        "staff",
        "Delete an organization",
        "orgs",
        query=("force",),
        operation_id="delete_org_by_id",
        errors=(409,),
    ),
]
