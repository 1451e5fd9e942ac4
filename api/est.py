"""EST (RFC 7030) for devices and tools that speak it, on the HTTPS listener only (over
plain HTTP, or behind a proxy that ends TLS, these paths are 404: re-enrollment needs the
device's own TLS client certificate, docs/provisioning.md):

- GET  /.well-known/est/cacerts         public: the site CA as PKCS#7 certs-only, base64
- POST /.well-known/est/simpleenroll    a new device: the claim's ID and secret as HTTP
       Basic (RFC 7030 3.2.3), a CSR (`application/pkcs10`, base64 DER) in, its certificate
       out (PKCS#7 certs-only, base64); REST enrollment's one path (the same claim rules,
       throttle, audit and transaction: `Enrollment.enroll_device`). No API key is given:
       the device signs in with its certificate (HTTPS, MQTT over TLS).
- POST /.well-known/est/simplereenroll  the device's current client certificate (no other
       credential): a CSR in, its new certificate out, as REST renewal; the certificate it
       held is superseded at once
"""

from __future__ import annotations

import base64
import binascii

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs7

from api import bodies, media_types
from api.certificates import held_certificate
from api.client_address import client_address
from api.keys import CHALLENGE, SERVICES
from api.routing import Route, client_certificate
from edge.certificates import issuing
from edge.kernel.errors import NotFound, Unauthenticated, ValidationError
from edge.provisioning.enrollment import REFUSED, Application

PKCS7 = "application/pkcs7-mime"
PKCS10 = "application/pkcs10"
CERTS_ONLY = f"{PKCS7}; smime-type=certs-only"
NEEDS_CERTIFICATE = (
    "EST re-enrollment takes the device's current client certificate, presented to edge's"
    " own HTTPS listener"
)
BASIC = 'Basic realm="edge EST", charset="UTF-8"'
# Re-enrollment's credential is the TLS client certificate, which no HTTP authentication
# scheme carries: its 401 has no WWW-Authenticate (a Bearer challenge would mislead).
NO_SCHEME = ""


def certs_only(request: web.Request, certificates: list[x509.Certificate]) -> web.Response:
    """A PKCS#7 certs-only answer, base64 as RFC 7030 4.1.3 and 4.2.3 ask."""
    der = pkcs7.serialize_certificates(certificates, serialization.Encoding.DER)
    kind = media_types.chosen(request, CERTS_ONLY)
    return web.Response(
        body=base64.encodebytes(der),
        headers={"Content-Type": kind, "Content-Transfer-Encoding": "base64"},
    )


def claim_of(request: web.Request) -> tuple[str, str]:
    """The claim's ID and secret from HTTP Basic (user = claim ID, password = secret): a
    401 asking for Basic when they are missing or unreadable, as for a bad claim."""
    request[CHALLENGE] = BASIC
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "basic":
        raise Unauthenticated(REFUSED)
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode()
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        raise Unauthenticated(REFUSED) from None
    claim_id, colon, secret = decoded.partition(":")
    if not colon:
        raise Unauthenticated(REFUSED)
    return claim_id, secret


async def csr_of(request: web.Request) -> bytes:
    """The CSR of an EST request: base64 DER (RFC 7030 4.2.1), or PEM from lenient tools."""
    if request.content_type != PKCS10:
        raise ValidationError(None, f"Content-Type must be {PKCS10}")
    raw = await bodies.read_bytes(request, issuing.MAX_BYTES * 2)
    if raw.lstrip().startswith(b"-----BEGIN"):
        return raw
    try:
        return base64.b64decode(b"".join(raw.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(issuing.FIELD, "must be base64 of a DER request") from None


def _over_tls(request: web.Request) -> None:
    transport = request.transport
    if transport is None or transport.get_extra_info("ssl_object") is None:
        raise NotFound("EST is served on the HTTPS listener only")


async def est_cacerts(request: web.Request) -> web.Response:
    _over_tls(request)
    return certs_only(request, [request.app[SERVICES].site_ca.cert])


async def est_simpleenroll(request: web.Request) -> web.Response:
    _over_tls(request)
    claim_id, secret = claim_of(request)
    application = Application(claim_id, secret, await csr_of(request))
    services = request.app[SERVICES]
    enrolled = await services.enrollment.enroll_device(application, client_address(request))
    return certs_only(request, [_loaded(enrolled.issued.certificate)])


async def est_simplereenroll(request: web.Request) -> web.Response:
    _over_tls(request)
    request[CHALLENGE] = NO_SCHEME  # a 401 here asks for no bearer: nothing but TLS helps
    der = client_certificate(request)
    if der is None:
        raise Unauthenticated(NEEDS_CERTIFICATE)
    services = request.app[SERVICES]
    caller = services.certificate_logins.principal(der)
    held = held_certificate(request)  # checked again where the new one is recorded
    issued = await services.device_certificates.renew(caller, await csr_of(request), held)
    return certs_only(request, [_loaded(issued.certificate)])


def _loaded(pem: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem.encode())


ROUTES = [
    Route(
        "GET",
        "/.well-known/est/cacerts",
        est_cacerts,
        "public",
        "EST (RFC 7030) CA certificates: the site CA, PKCS#7 certs-only, base64 (HTTPS only)",
        "provisioning",
        responses={200: "PKCS#7 certs-only (base64)"},
        response_type=media_types.either(PKCS7),
        extension=True,
        errors=(404,),
    ),
    Route(
        "POST",
        "/.well-known/est/simpleenroll",
        est_simpleenroll,
        "public",
        "EST (RFC 7030) enrollment: a new device presents a claim's ID and secret as HTTP"
        " Basic (user = claim ID, password = secret) and a CSR (application/pkcs10, base64"
        " DER) and gets its certificate (PKCS#7 certs-only, base64), HTTPS only; it signs in"
        " with that certificate (no API key is given)",
        "provisioning",
        responses={200: "PKCS#7 certs-only (base64)"},
        response_type=media_types.either(PKCS7),
        extension=True,
        errors=(400, 401, 404, 408, 413, 429),
    ),
    Route(
        "POST",
        "/.well-known/est/simplereenroll",
        est_simplereenroll,
        "public",
        "EST (RFC 7030) re-enrollment: with its current client certificate (HTTPS only), a"
        " device sends a CSR (application/pkcs10, base64 DER) and gets its new certificate"
        " (PKCS#7 certs-only, base64); the one it held is superseded",
        "provisioning",
        responses={200: "PKCS#7 certs-only (base64)"},
        response_type=media_types.either(PKCS7),
        extension=True,
        errors=(400, 401, 404, 408, 413, 429),
    ),
]
