"""E-mail templates. Every route needs a token; only admins manage templates.

- POST   /v2/email/templates                 org admins; project admins for their project
- GET    /v2/email/templates                 org admins: all; project admins: their projects'
- GET    /v2/email/templates/{template_id}   org admins; admins of the template's project
- PATCH  /v2/email/templates/{template_id}   the same
- DELETE /v2/email/templates/{template_id}   the same (`force` past delete protection)
"""

from __future__ import annotations

from aiohttp import web

from api import bodies, listing, params
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import (
    BOOL,
    DESCRIPTION,
    EMAIL,
    LOCALE,
    NAME,
    NULLABLE_STR,
    TAG_LIST,
    Schema,
    nullable,
    obj,
    single_line,
)
from edge.delivery import templating
from edge.tenancy.email_templates import MAX_BODY, MAX_SUBJECT, TABLE

_TEMPLATE: dict[str, Schema] = {
    "name": NAME,
    "subject": single_line(MAX_SUBJECT),
    "body_txt": {"type": "string", "maxLength": MAX_BODY},
    "body_html": {"type": "string", "maxLength": MAX_BODY},
    "from_address": {**EMAIL, "type": ["string", "null"], "pattern": f"^$|{EMAIL['pattern']}"},
    "description": nullable(DESCRIPTION),
    "project_id": NULLABLE_STR,
    "is_delete_protected": BOOL,
    "tags": TAG_LIST,
    "custom_args": {
        "type": "array",
        "items": {
            "type": "string",
            "pattern": templating.NAME.pattern,
            "not": {"enum": sorted(templating.KNOWN)},
        },
    },
    "for_account_recovery": BOOL,
    "for_new_users": BOOL,
    "locale": LOCALE,
}
CREATE_TEMPLATE = obj(
    _TEMPLATE, ("name", "subject", "body_txt", "body_html"), title="CreateEmailTemplateBody"
)
PATCH_TEMPLATE = obj({**_TEMPLATE, "is_active": BOOL}, title="PatchEmailTemplateBody")
LISTABLE = listing.Listable("email_templates", TABLE.kinds(), table=TABLE)


async def create_template(request: web.Request) -> web.Response:
    body = _without_nulls(await bodies.read_json(request, CREATE_TEMPLATE))
    new_id = await request.app[SERVICES].email_templates.create(principal(request), body)
    return json_response({"template": {"id": new_id}}, status=201)


async def list_templates(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.email_templates.list(principal(request), query)
    return listing.respond("templates", page, query, services.cursors, LISTABLE.resource)


async def get_template(request: web.Request) -> web.Response:
    templates = request.app[SERVICES].email_templates
    return json_response(
        {"template": templates.get(principal(request), request.match_info["template_id"])}
    )


async def patch_template(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_TEMPLATE)
    if body.get("description", "") is None:
        body["description"] = ""
    templates = request.app[SERVICES].email_templates
    await templates.patch(principal(request), request.match_info["template_id"], body)
    return json_response({"message": "Success"})


async def delete_template(request: web.Request) -> web.Response:
    """Templates are erased at once (`permanent` is accepted; there is no trash for them)."""
    flags = params.deletion(request.query, permanent_by_default=True)
    templates = request.app[SERVICES].email_templates
    await templates.delete(principal(request), request.match_info["template_id"], force=flags.force)
    return json_response({"message": "Success"})


def _without_nulls(body: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in body.items() if v is not None}


_ONE = "/v2/email/templates/{template_id}"
_TAG = "emails"
ROUTES = [
    Route(
        "POST",
        "/v2/email/templates",
        create_template,
        "token",
        "Create an e-mail template",
        _TAG,
        body=CREATE_TEMPLATE,
        responses={201: "NewEmailTemplateInfo"},
        operation_id="create_email_template",
    ),
    Route(
        "GET",
        "/v2/email/templates",
        list_templates,
        "token",
        "List e-mail templates",
        _TAG,
        query=("list", *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "EmailTemplateList"},
        operation_id="get_email_templates",
    ),
    Route(
        "GET",
        _ONE,
        get_template,
        "token",
        "Get an e-mail template",
        _TAG,
        responses={200: "EmailTemplateInfo"},
        operation_id="get_email_template_by_id",
    ),
    Route(
        "PATCH",
        _ONE,
        patch_template,
        "token",
        "Update an e-mail template",
        _TAG,
        body=PATCH_TEMPLATE,
        operation_id="patch_email_template",
    ),
    Route(
        "DELETE",
        _ONE,
        delete_template,
        "token",
        "Delete an e-mail template",
        _TAG,
        query=params.DELETE_QUERY,
        operation_id="delete_email_template_by_id",
        errors=(409,),
    ),
]
