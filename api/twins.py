"""Device twins (docs/twins.md), an extension of the interface.

- GET   /v2/devices/{device_id}/twin   those who may read the device
- PATCH /v2/devices/{device_id}/twin   `desired`: those who may update the device, not the
                                       device itself; `reported`: the device itself alone

PATCH takes `{"desired": {...}}` or `{"reported": {...}}`, each a JSON merge patch (RFC
7396: `null` removes a key), and an optional `version` (or `If-Match: "<version>"`, the
ETag a GET gave): on a mismatch, a 409 naming the current version. Both answer the twin
with its version as the ETag.
"""

from __future__ import annotations

from aiohttp import web

from api import bodies, preconditions
from api.keys import SERVICES
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import integer, obj
from edge.twins.document import MAX_KEY_CHARS
from edge.twins.twins import MAX_CLIENT_TOKEN, Twin, Twins, view

# A section's keys at every level are 1 to MAX_KEY_CHARS characters and hold no control
# character (but where null removes them), nested at most
# document.MAX_DEPTH deep, the whole twin at most `twin_max_bytes` (docs/twins.md): the
# service's 400s; the schema can state the top level's keys only.
SECTION = {
    "type": ["object", "null"],
    "propertyNames": {"minLength": 1, "maxLength": MAX_KEY_CHARS},
}
PATCH_TWIN = {
    **obj(
        {
            "desired": SECTION,
            "reported": SECTION,
            "version": integer(0, 1 << 62),
            "client_token": {"type": "string", "maxLength": MAX_CLIENT_TOKEN},
        },
        title="PatchTwinBody",
    ),
    "anyOf": [{"required": ["desired"]}, {"required": ["reported"]}],
}


def _twins(request: web.Request) -> Twins:
    return request.app[SERVICES].twins


def _answer(twin: Twin) -> web.Response:
    return json_response({"twin": view(twin)}, headers={"ETag": f'"{twin.version}"'})


async def get_twin(request: web.Request) -> web.Response:
    return _answer(_twins(request).get(principal(request), request.match_info["device_id"]))


async def patch_twin(request: web.Request) -> web.Response:
    if_match = preconditions.if_match(request, "the twin's version")
    body = await bodies.read_json(request, PATCH_TWIN)
    device_id = request.match_info["device_id"]
    return _answer(await _twins(request).patch(principal(request), device_id, body, if_match))


ROUTES = [
    Route(
        "GET",
        "/v2/devices/{device_id}/twin",
        get_twin,
        "token",
        "Get a device's twin: desired and reported state, their delta, when each leaf was"
        " last set, and the version",
        "devices",
        responses={200: "TwinInfo"},
        operation_id="get_device_twin",
        extension=True,
    ),
    Route(
        "PATCH",
        "/v2/devices/{device_id}/twin",
        patch_twin,
        "token",
        "Update a device's twin: desired (those who may update the device) or reported (the"
        " device itself), as a JSON merge patch; version or If-Match for a conditional update",
        "devices",
        body=PATCH_TWIN,
        responses={200: "TwinInfo"},
        operation_id="patch_device_twin",
        extension=True,
        errors=(409,),
    ),
]
