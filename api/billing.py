"""Billing points of an organization (staff only; docs/billing.md).

Routes (every one "staff": org admins, users and devices get 403):
- POST   /v2/orgs/{org_id}/billing-points                credit (points > 0) or debit (< 0)
- GET    /v2/orgs/{org_id}/billing-points                the ledger (shared list engine)
- GET    /v2/orgs/{org_id}/billing-points/balance        balance, credits and debits
- GET    /v2/orgs/{org_id}/billing-points/usage          usage and points per day or month
- GET    /v2/orgs/{org_id}/billing-points/rates          points per unit of each meter
- PATCH  /v2/orgs/{org_id}/billing-points/rates          change some rates
- GET    /v2/orgs/{org_id}/billing-points/{entry_id}     one entry
- PATCH  /v2/orgs/{org_id}/billing-points/{entry_id}     its description and tags
- DELETE /v2/orgs/{org_id}/billing-points/{entry_id}     a staff entry (usage debits: 409)

The ledger lives under its organization because it is one organization's account, and
under `/v2/orgs` because, like organizations, it is staff's alone.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from api import bodies, listing, params
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Handler, Route, principal
from api.schemas import DESCRIPTION, INT, STR, TAG_LIST, TAGS, Schema, integer, obj
from edge.billing.ledger import MAX_POINTS, TABLE
from edge.billing.rates import MAX_RATE, METERS

BASE = "/v2/orgs/{org_id}/billing-points"
ENTRY = BASE + "/{entry_id}"
CREATE = obj(
    {
        "points": {**integer(-MAX_POINTS, MAX_POINTS), "not": {"const": 0}},
        "description": DESCRIPTION,
        "tags": TAG_LIST,
    },
    ("points",),
    title="CreateBillingPointBody",
)
PATCH = obj({"description": DESCRIPTION, "tags": TAG_LIST}, title="PatchBillingPointBody")
RATES = obj({meter: integer(0, MAX_RATE) for meter in METERS}, title="PatchBillingRatesBody")
SUMMARY_QUERY = ("period", "from", "to")
# Points and meters, no text worth a full-text index: `search` is a 400
# (`description_contains` filters the one text an entry has).
LISTABLE = listing.Listable(
    "billing_points", TABLE.kinds(), table=TABLE, default_order="created_date", searchable=False
)

_ENTRY: Schema = obj(
    {
        "id": STR,
        "org_id": STR,
        "kind": {"type": "string", "enum": ["credit", "debit", "usage"]},
        "points": INT,
        "meter": {"type": "string", "enum": list(METERS)},
        "quantity": INT,
        "day": {"type": "string", "format": "date"},
        "description": STR,
        "tags": TAGS,
        "created_date": {"type": "string", "format": "date-time"},
        "created_by": {"type": ["string", "null"]},
        "last_updated_date": {"type": "string", "format": "date-time"},
        "last_updated_by": {"type": ["string", "null"]},
    },
    ("id", "org_id", "kind", "points", "description", "tags", "created_date"),
    title="BillingPoint",
)
_AMOUNTS: Schema = obj(
    {
        "credits": INT,
        "debits": INT,
        "net": INT,
        "meters": obj({m: obj({"quantity": INT, "points": INT}) for m in METERS}),
    }
)
_PERIOD: Schema = {
    **_AMOUNTS,
    "properties": {**_AMOUNTS["properties"], "period": STR},
}
# The response models, for the OpenAPI document (by the names the routes give).
MODELS: dict[str, Schema] = {
    "BillingPoint": _ENTRY,
    "BillingPointInfo": obj({"billing_point": _ENTRY}, ("billing_point",)),
    "NewBillingPointInfo": obj({"billing_point": _ENTRY}, ("billing_point",)),
    "BillingPointList": obj(
        {
            "billing_points": {"type": "array", "items": _ENTRY},
            "last_evaluated_key": {"type": "object"},
            "object_count": INT,
            "page_count": INT,
        }
    ),
    "BillingBalance": obj(
        {"org_id": STR, "balance": INT, "credits": INT, "debits": INT, "as_of": STR},
        ("org_id", "balance", "credits", "debits", "as_of"),
    ),
    "BillingUsageSummary": obj(
        {
            "org_id": STR,
            "period": {"type": "string", "enum": ["day", "month"]},
            "from": {"type": "string", "format": "date"},
            "to": {"type": "string", "format": "date"},
            "units": obj({m: STR for m in METERS}),
            "periods": {"type": "array", "items": _PERIOD},
            "totals": _AMOUNTS,
        }
    ),
    "BillingRates": obj(
        {
            "org_id": STR,
            "rates": obj({m: INT for m in METERS}),
            "units": obj({m: STR for m in METERS}),
        }
    ),
}


def _ids(request: web.Request) -> tuple[str, str]:
    return request.match_info["org_id"], request.match_info["entry_id"]


async def create_entry(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE)
    billing = request.app[SERVICES].billing
    org_id, who = request.match_info["org_id"], principal(request)
    entry_id = await billing.create(who, org_id, body)
    return json_response({"billing_point": billing.get(who, org_id, entry_id)}, status=201)


async def list_entries(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.billing.list(principal(request), request.match_info["org_id"], query)
    return listing.respond("billing_points", page, query, services.cursors, LISTABLE.resource)


async def get_entry(request: web.Request) -> web.Response:
    entry = request.app[SERVICES].billing.get(principal(request), *_ids(request))
    return json_response({"billing_point": entry})


async def patch_entry(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH)
    await request.app[SERVICES].billing.patch(principal(request), *_ids(request), body)
    return json_response({"message": "Success"})


async def delete_entry(request: web.Request) -> web.Response:
    await request.app[SERVICES].billing.delete(principal(request), *_ids(request))
    return json_response({"message": "Success"})


async def get_balance(request: web.Request) -> web.Response:
    params.only(request.query, ())
    billing = request.app[SERVICES].billing
    return json_response(billing.balance(principal(request), request.match_info["org_id"]))


async def get_usage(request: web.Request) -> web.Response:
    given = params.only(request.query, SUMMARY_QUERY)
    summary = request.app[SERVICES].billing.summary(
        principal(request),
        request.match_info["org_id"],
        given.get("period", "month").strip().lower(),
        given.get("from"),
        given.get("to"),
    )
    return json_response(summary)


async def get_rates(request: web.Request) -> web.Response:
    params.only(request.query, ())
    billing = request.app[SERVICES].billing
    return json_response(billing.rates(principal(request), request.match_info["org_id"]))


async def patch_rates(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, RATES)
    who, org_id = principal(request), request.match_info["org_id"]
    await request.app[SERVICES].billing.patch_rates(who, org_id, body)
    return json_response(request.app[SERVICES].billing.rates(who, org_id))


def _route(method: str, path: str, handler: Handler, summary: str, **kw: Any) -> Route:
    return Route(method, path, handler, "staff", summary, "billing", **kw)


ROUTES = [
    _route(
        "POST",
        BASE,
        create_entry,
        "Credit (points > 0) or debit (points < 0) an organization's billing points",
        body=CREATE,
        responses={201: "NewBillingPointInfo"},
        operation_id="create_billing_point",
    ),
    _route(
        "GET",
        BASE,
        list_entries,
        "List an organization's billing point entries",
        query=(*LISTABLE.common(), *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "BillingPointList"},
        operation_id="get_billing_points",
    ),
    _route(
        "GET",
        BASE + "/balance",
        get_balance,
        "An organization's billing point balance",
        responses={200: "BillingBalance"},
        operation_id="get_billing_balance",
        errors=(400,),
    ),
    _route(
        "GET",
        BASE + "/usage",
        get_usage,
        "Metered usage and points of an organization, per day or month",
        query=SUMMARY_QUERY,
        responses={200: "BillingUsageSummary"},
        operation_id="get_billing_usage",
    ),
    _route(
        "GET",
        BASE + "/rates",
        get_rates,
        "Points per unit of each meter for an organization",
        responses={200: "BillingRates"},
        operation_id="get_billing_rates",
        errors=(400,),
    ),
    _route(
        "PATCH",
        BASE + "/rates",
        patch_rates,
        "Change an organization's rates",
        body=RATES,
        responses={200: "BillingRates"},
        operation_id="patch_billing_rates",
    ),
    _route(
        "GET",
        ENTRY,
        get_entry,
        "Get one billing point entry",
        responses={200: "BillingPointInfo"},
        operation_id="get_billing_point_by_id",
    ),
    _route(
        "PATCH",
        ENTRY,
        patch_entry,
        "Change the description or tags of a billing point entry",
        body=PATCH,
        operation_id="patch_billing_point",
    ),
    _route(
        "DELETE",
        ENTRY,
        delete_entry,
        "Delete a staff entry (usage debits cannot be deleted)",
        operation_id="delete_billing_point_by_id",
        errors=(409,),
    ),
]
