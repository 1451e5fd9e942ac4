"""Devices of the caller's organization.

Every route but the CA certificate needs a token of the organization (staff: with
scope=<org>) or a device's API key (`Authorization: Bearer <key>` or `X-API-Key`); what
the caller may do to which device is decided by the permission engine with
`device_permissions` (docs/devices.md):

- GET    /v2/devices/root-ca.pem                        public: the site CA certificate (PEM)
- POST   /v2/devices                                    device create permission (org, or the
                                                        new device's project)
- GET    /v2/devices                                    lists the devices the caller may read
                                                        (`is_online`: docs/presence.md)
- GET    /v2/devices/{device_id}                        read permission, the owner, or the
                                                        device itself
- PATCH  /v2/devices/{device_id}                        update permission, or the device
                                                        itself; owner: admins or the owner
- DELETE /v2/devices/{device_id}                        delete permission; `force` for admins
- POST   /v2/devices/{device_id}/reset-api-key          update permission, or the device itself
- POST   /v2/devices/{device_id}/reset-mqtt-credentials update permission, or the device itself
"""

from __future__ import annotations

from dataclasses import replace

from aiohttp import hdrs, web

from api import account_filters, bodies, listing, params
from api.keys import SERVICES
from api.responses import NO_STORE, json_response
from api.routing import Route, principal
from api.schemas import (
    BOOL,
    LOCALE,
    NULLABLE_STR,
    OBJECT,
    STR,
    TAG_LIST,
    TIME_ZONE,
    Schema,
    nullable,
    obj,
    text,
)
from api.users import ORG_PERMISSIONS, PROJECT_PERMISSIONS
from edge.accounts.device_kind import DESCRIPTIVE, TABLE
from edge.devices.credentials import ROOT_CA_PATH
from edge.kernel import fields

_FIELDS: dict[str, Schema] = {
    "name": text(),
    "owner_id": NULLABLE_STR,
    **dict.fromkeys(DESCRIPTIVE, nullable(text(required=False))),
    "locale": LOCALE,
    "zoneinfo": TIME_ZONE,
    "picture": nullable(text(fields.MAX_URL, required=False)),
    "tags": TAG_LIST,
    "is_active": BOOL,
    "is_delete_protected": BOOL,
    "custom_attributes": OBJECT,
    "restricted_custom_attributes": OBJECT,
    "iot_scopes": OBJECT,
    "org_permissions": ORG_PERMISSIONS,
    "project_permissions": PROJECT_PERMISSIONS,
}
CREATE_DEVICE = obj({**_FIELDS, "project_id": STR}, ("name",), title="CreateDeviceBody")
PATCH_DEVICE = obj(_FIELDS, title="PatchDeviceBody")
LISTABLE = listing.Listable(
    "devices",
    TABLE.kinds(),
    table=TABLE,
    json_columns=TABLE.json_columns,
    extras=(*account_filters.EXTRAS, "is_online"),
)
PEM = "application/x-pem-file"
TEXT = "text/plain"


async def root_ca(request: web.Request) -> web.Response:
    kind = _pem_type(request.headers.get(hdrs.ACCEPT, ""))
    return web.Response(body=request.app[SERVICES].site_ca.pem, content_type=kind)


def _pem_type(accept: str) -> str:
    """The PEM type (a browser saves the file), or `text/plain` for a client that asks for
    it and not for the PEM type: a generated client reads the certificate as text."""
    asked = {part.partition(";")[0].strip().lower() for part in accept.split(",")}
    return TEXT if TEXT in asked and PEM not in asked else PEM


async def create_device(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_DEVICE)
    made = await request.app[SERVICES].devices.create(principal(request), body)
    return json_response({"device": made}, status=201, headers=NO_STORE)  # its key, once


async def list_devices(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    query, extras = listing.parse(request.query, LISTABLE, services.cursors)
    filters = account_filters.filters(extras)
    if "is_online" in extras:
        filters = replace(filters, is_online=params.boolean("is_online", extras["is_online"]))
    page = await services.devices.list(principal(request), query, filters)
    return listing.respond("devices", page, query, services.cursors, LISTABLE.resource)


async def get_device(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    device = services.devices.get(principal(request), request.match_info["device_id"])
    return json_response({"device": device})


async def patch_device(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_DEVICE)
    device_id = request.match_info["device_id"]
    await request.app[SERVICES].devices.patch(principal(request), device_id, body)
    return json_response({"message": "Success"})


async def delete_device(request: web.Request) -> web.Response:
    flags = params.deletion(request.query)
    await request.app[SERVICES].devices.delete(
        principal(request),
        request.match_info["device_id"],
        force=flags.force,
        permanent=flags.permanent,
    )
    return json_response({"message": "Success"})


async def reset_api_key(request: web.Request) -> web.Response:
    device_id = request.match_info["device_id"]
    key = await request.app[SERVICES].devices.reset_api_key(principal(request), device_id)
    return json_response(key, headers=NO_STORE)


async def reset_mqtt_credentials(request: web.Request) -> web.Response:
    device_id = request.match_info["device_id"]
    devices = request.app[SERVICES].devices
    made = await devices.reset_mqtt_credentials(principal(request), device_id)
    return json_response(made, headers=NO_STORE)  # its private key, once


ROUTES = [
    Route(
        "GET",
        ROOT_CA_PATH,
        root_ca,
        "public",
        "The site CA certificate (PEM) that signs device certificates and the broker's",
        "devices",
        responses={200: "PEM certificate"},
        response_type=f"{PEM} | {TEXT}",
        operation_id="get_root_ca",
        extension=True,
    ),
    Route(
        "POST",
        "/v2/devices",
        create_device,
        "token",
        "Create a device: its API key, key pair and certificate are shown this once",
        "devices",
        body=CREATE_DEVICE,
        responses={201: "NewDeviceInfo"},
        errors=(409,),
    ),
    Route(
        "GET",
        "/v2/devices",
        list_devices,
        "token",
        "List devices",
        "devices",
        query=("list", *LISTABLE.extras, *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "AdminDeviceList | DeviceList | AnonDeviceList"},
        operation_id="get_devices",
    ),
    Route(
        "GET",
        "/v2/devices/{device_id}",
        get_device,
        "token",
        "Get a device",
        "devices",
        responses={200: "AdminDeviceInfo | DeviceInfo | AnonDeviceInfo"},
        operation_id="get_device_by_id",
    ),
    Route(
        "PATCH",
        "/v2/devices/{device_id}",
        patch_device,
        "token",
        "Update, suspend or reactivate a device",
        "devices",
        body=PATCH_DEVICE,
        errors=(409,),
    ),
    Route(
        "DELETE",
        "/v2/devices/{device_id}",
        delete_device,
        "token",
        "Delete a device (to the trash unless permanent=true); its credentials end at once",
        "devices",
        query=("force", "permanent"),
        operation_id="delete_device_by_id",
        errors=(409,),
    ),
    Route(
        "POST",
        "/v2/devices/{device_id}/reset-api-key",
        reset_api_key,
        "token",
        "Issue a new API key; the old one stops working at once",
        "devices",
        responses={200: "NewApiKey"},
        operation_id="key",
        description="The SDK's `devices.key`: a new API key for the device; the old one"
        " stops working.",
    ),
    Route(
        "POST",
        "/v2/devices/{device_id}/reset-mqtt-credentials",
        reset_mqtt_credentials,
        "token",
        "Issue a new key pair and certificate; the old certificate is refused from now on",
        "devices",
        responses={200: "NewMqttCredentials"},
    ),
]
