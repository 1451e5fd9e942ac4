"""Zero-touch provisioning (docs/provisioning.md), an extension of the interface.

- POST   /v2/provisioning/claims             org admins; project admins for their project
- GET    /v2/provisioning/claims             org admins: all; project admins: their projects'
- GET    /v2/provisioning/claims/{claim_id}  org admins; admins of the claim's project
- DELETE /v2/provisioning/claims/{claim_id}  the same: revokes the claim
- POST   /v2/provisioning/enroll             public: the claim's ID and secret are the
                                             credentials (throttled like sign-ins)
"""

from __future__ import annotations

from aiohttp import web

from api import bodies, listing
from api.client_address import client_address
from api.groups import CREATE_ACCESS
from api.keys import SERVICES
from api.model_fields import DATETIME, INT, OBJECT, STR, STR_LIST, Schema, model, one, page
from api.responses import NO_STORE, json_response
from api.routing import Route, principal
from api.schemas import NAME, NULLABLE_STR, TAG_LIST, integer, obj
from api.schemas import OBJECT as ANY_OBJECT
from edge.certificates import issuing
from edge.provisioning.claims import MAX_USES, TABLE
from edge.provisioning.enrollment import ENROLL_PATH
from edge.provisioning.template import MAX_GROUPS

_TEMPLATE = obj(
    {
        "groups": {
            **ANY_OBJECT,
            "maxProperties": MAX_GROUPS,
            "additionalProperties": CREATE_ACCESS,
        },
        "tags": TAG_LIST,
        "iot_scopes": ANY_OBJECT,
    },
    title="ClaimTemplate",
)
CREATE_CLAIM = obj(
    {
        "name": NAME,
        "project_id": NULLABLE_STR,
        "max_uses": integer(1, MAX_USES),
        "expires_date": {"type": "string", "format": "date-time"},
        "template": _TEMPLATE,
    },
    ("name",),
    title="CreateProvisioningClaimBody",
)
ENROLL = obj(
    {
        "claim_id": {"type": "string", "maxLength": 64},
        "secret": {"type": "string", "maxLength": 256},
        "csr": {"type": "string", "maxLength": issuing.MAX_BYTES},
        "name": NAME,
    },
    ("claim_id", "secret", "csr"),
    title="EnrollBody",
)
LISTABLE = listing.Listable("provisioning_claims", TABLE.kinds(), table=TABLE)

_CLAIM = model(
    "A provisioning claim (docs/provisioning.md); never its secret",
    "id* name* project_id template* max_uses* uses* expires_date* state* created_date*"
    " created_by last_used_date revoked_date revoked_by",
    template=OBJECT,
    max_uses=INT,
    uses=INT,
    expires_date=DATETIME,
    state={"type": "string", "enum": ["active", "used_up", "expired", "revoked"]},
    last_used_date=DATETIME,
    revoked_date=DATETIME,
    revoked_by=STR,
)
_NEW_CLAIM = {
    **_CLAIM,
    "properties": {
        **_CLAIM["properties"],
        "secret": STR,
        "qr_code": {**STR, "description": "data:image/png;base64 URL of the QR code"},
    },
    "required": [*_CLAIM["required"], "secret", "qr_code"],
    "description": "A new claim with its secret and QR code, shown this once",
}
MODELS: dict[str, Schema] = {
    "ProvisioningClaim": _CLAIM,
    "NewProvisioningClaim": _NEW_CLAIM,
    "ProvisioningClaimInfo": one("A provisioning claim", "claim", "ProvisioningClaim"),
    "NewProvisioningClaimInfo": one("A new claim", "claim", "NewProvisioningClaim"),
    "ProvisioningClaimList": page("Provisioning claims", "claims", "ProvisioningClaim"),
    "EnrolledDevice": model(
        "A device that enrolled itself: its credentials, shown this once (no private key:"
        " it never left the device)",
        "id* name* claim_id* api_key* certificate* public_key* root_ca* broker* root_scope*"
        " project_id tags* iot_scopes* groups*",
        claim_id=STR,
        groups=STR_LIST,
    ),
}


async def create_claim(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_CLAIM)
    claim = await request.app[SERVICES].claims.create(principal(request), body)
    return json_response({"claim": claim}, status=201, headers=NO_STORE)  # its secret


async def list_claims(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    found = await services.claims.list(principal(request), query)
    return listing.respond("claims", found, query, services.cursors, LISTABLE.resource)


async def get_claim(request: web.Request) -> web.Response:
    claims = request.app[SERVICES].claims
    return json_response({"claim": claims.get(principal(request), request.match_info["claim_id"])})


async def revoke_claim(request: web.Request) -> web.Response:
    claims = request.app[SERVICES].claims
    await claims.revoke(principal(request), request.match_info["claim_id"])
    return json_response({"message": "Success"})


async def enroll(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, ENROLL)
    enrollment = request.app[SERVICES].enrollment
    enrolled = await enrollment.enroll(body, client_address(request))
    return json_response(enrolled, status=201, headers=NO_STORE)  # its API key


_TAG = "provisioning"
_ONE = "/v2/provisioning/claims/{claim_id}"
ROUTES = [
    Route(
        "POST",
        "/v2/provisioning/claims",
        create_claim,
        "token",
        "Create a provisioning claim: its secret and QR code are shown this once",
        _TAG,
        body=CREATE_CLAIM,
        responses={201: "NewProvisioningClaimInfo"},
        operation_id="create_provisioning_claim",
        extension=True,
    ),
    Route(
        "GET",
        "/v2/provisioning/claims",
        list_claims,
        "token",
        "List provisioning claims",
        _TAG,
        query=("list", *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "ProvisioningClaimList"},
        operation_id="get_provisioning_claims",
        extension=True,
    ),
    Route(
        "GET",
        _ONE,
        get_claim,
        "token",
        "Get a provisioning claim",
        _TAG,
        responses={200: "ProvisioningClaimInfo"},
        operation_id="get_provisioning_claim",
        extension=True,
    ),
    Route(
        "DELETE",
        _ONE,
        revoke_claim,
        "token",
        "Revoke a provisioning claim: no device enrolls with it any more",
        _TAG,
        operation_id="revoke_provisioning_claim",
        extension=True,
    ),
    Route(
        "POST",
        ENROLL_PATH,
        enroll,
        "public",
        "Enroll a device with a claim and a certificate signing request (PKCS#10, PEM)",
        _TAG,
        body=ENROLL,
        responses={201: "EnrolledDevice"},
        operation_id="enroll_device",
        extension=True,
        errors=(401, 409, 429),
    ),
]
