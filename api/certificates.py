"""Device certificates over their life (docs/provisioning.md), an extension of the
interface. Every route is under /v2/provisioning/, apart from the device's own routes.

- GET  /v2/provisioning/crl                                         public: the site CA's CRL
- POST /v2/provisioning/renew                                       a device, for itself
       (its client certificate over HTTPS, or its API key): a new certificate for its CSR
- GET  /v2/provisioning/devices/{device_id}/certificates            admins of the device
- POST /v2/provisioning/devices/{device_id}/certificates/{serial}/revoke
                                                                    admins of the device
"""

from __future__ import annotations

from aiohttp import web

from api import bodies, media_types
from api.keys import SERVICES
from api.model_fields import DATETIME, STR, Schema, model
from api.responses import json_response
from api.routing import Route, client_certificate, presented_token, principal
from api.schemas import obj
from edge.accounts.device_certificates import (
    NOT_IN_FORCE,
    REVOKE_REASONS,
    DeviceCertificates,
    Held,
)
from edge.certificates import issuing
from edge.certificates.ca import Issued
from edge.kernel import clock
from edge.kernel.errors import Unauthenticated

CRL_TYPE = "application/pkix-crl"
RENEW = obj(
    {"csr": {"type": "string", "maxLength": issuing.MAX_BYTES}}, ("csr",), title="RenewBody"
)
REVOKE = obj(
    {"reason": {"type": "string", "enum": list(REVOKE_REASONS)}}, title="RevokeCertificateBody"
)
_CERTIFICATE = model(
    "A certificate the site CA issued to a device, as the registry keeps it: active,"
    " superseded (a reset or renewal issued the next) or revoked",
    "serial* device_id* fingerprint* issued_date* not_before* not_after* status* reason"
    " revoked_date",
    serial=STR,
    device_id=STR,
    fingerprint=STR,
    issued_date=DATETIME,
    not_before=DATETIME,
    not_after=DATETIME,
    status={"type": "string", "enum": ["active", "superseded", "revoked"]},
    reason={"type": ["string", "null"]},
    revoked_date={"type": ["string", "null"]},
)
_RENEWED = model(
    "The device's new certificate (PEM) for the key of its CSR, and the site CA's",
    "certificate* serial* fingerprint* not_before* not_after* ca_certificate*",
    certificate=STR,
    serial=STR,
    fingerprint=STR,
    not_before=DATETIME,
    not_after=DATETIME,
    ca_certificate=STR,
)
MODELS: dict[str, Schema] = {
    "DeviceCertificate": _CERTIFICATE,
    "DeviceCertificateInfo": obj({"certificate": _CERTIFICATE}, ("certificate",)),
    "DeviceCertificateList": obj(
        {"certificates": {"type": "array", "items": _CERTIFICATE}}, ("certificates",)
    ),
    "RenewedCertificate": obj({"certificate": _RENEWED}, ("certificate",)),
}


def _service(request: web.Request) -> DeviceCertificates:
    return request.app[SERVICES].device_certificates


def renewed(issued: Issued, ca_pem: bytes) -> dict[str, str]:
    return {
        "certificate": issued.certificate,
        "serial": issued.serial,
        "fingerprint": issued.fingerprint,
        "not_before": clock.iso(issued.not_before),
        "not_after": clock.iso(issued.not_after),
        "ca_certificate": ca_pem.decode(),
    }


async def get_crl(request: web.Request) -> web.Response:
    kind = media_types.chosen(request, CRL_TYPE)
    return web.Response(
        body=_service(request).crl(), content_type=kind, headers={"Cache-Control": "no-cache"}
    )


async def renew_certificate(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, RENEW)
    issued = await _service(request).renew(principal(request), body["csr"], held(request))
    ca_pem = request.app[SERVICES].site_ca.pem
    return json_response({"certificate": renewed(issued, ca_pem)}, status=201)


def held(request: web.Request) -> Held:
    """The credential this request was authenticated with, for the renewal to check again
    once its body is in: its API key, else its client certificate."""
    token = presented_token(request)
    return Held.api_key(token) if token is not None else held_certificate(request)


def held_certificate(request: web.Request) -> Held:
    """The client certificate of this request, by serial, if it is in force now."""
    der = client_certificate(request)
    found = request.app[SERVICES].certificate_logins.accepted(der) if der is not None else None
    if found is None:
        raise Unauthenticated(NOT_IN_FORCE)
    return Held.certificate(found.serial)


async def list_device_certificates(request: web.Request) -> web.Response:
    device_id = request.match_info["device_id"]
    return json_response({"certificates": _service(request).listed(principal(request), device_id)})


async def revoke_device_certificate(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, REVOKE) if request.body_exists else {}
    device_id, serial = request.match_info["device_id"], request.match_info["serial"]
    reason = body.get("reason", "unspecified")
    row = await _service(request).revoke(principal(request), device_id, serial, reason)
    return json_response({"certificate": row})


ROUTES = [
    Route(
        "GET",
        "/v2/provisioning/crl",
        get_crl,
        "public",
        "The site CA's certificate revocation list (DER): device certificates superseded or"
        " revoked and not yet expired",
        "provisioning",
        responses={200: "CRL (DER)"},
        response_type=media_types.either(CRL_TYPE),
        extension=True,
    ),
    Route(
        "POST",
        "/v2/provisioning/renew",
        renew_certificate,
        "token",
        "A device renews its own certificate: the site CA signs the key of its CSR (PEM);"
        " the certificate it held is superseded. Authenticated by that certificate (HTTPS)"
        " or the device's API key",
        "provisioning",
        body=RENEW,
        responses={201: "RenewedCertificate"},
        extension=True,
        errors=(429,),
    ),
    Route(
        "GET",
        "/v2/provisioning/devices/{device_id}/certificates",
        list_device_certificates,
        "token",
        "The certificates the site CA issued to a device, the newest first (admins of the device)",
        "provisioning",
        responses={200: "DeviceCertificateList"},
        extension=True,
    ),
    Route(
        "POST",
        "/v2/provisioning/devices/{device_id}/certificates/{serial}/revoke",
        revoke_device_certificate,
        "token",
        "Revoke a device's certificate in force (admins of the device): every listener"
        " refuses it from now on, and the CRL lists it. One already ended and not yet"
        " expired may be revoked again with key_compromise, once",
        "provisioning",
        body=REVOKE,
        responses={200: "DeviceCertificateInfo"},
        extension=True,
        errors=(409,),
    ),
]
