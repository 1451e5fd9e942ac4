"""The rules a certificate signing request (PKCS#10, PEM) must meet before the site CA signs
it (docs/provisioning.md). Each broken rule is a 400 on `csr` that names it:

- it is one PEM `CERTIFICATE REQUEST` that parses;
- its key is EC on P-256 or P-384, or RSA of 2048 to 8192 bits with the public exponent
  65537 (what TLS stacks of devices and the broker's listener all speak, and the one
  exponent they use: an odd one is a sign of a broken or hostile key maker); no Ed25519,
  DSA or small RSA;
- its signature is good: whoever sent it holds the private key;
- its subject names no other device: a common name that is the ID or the name of a device
  of the organization is refused, and a subject that cannot be decoded too.

Nothing else of the subject is used: the certificate is made out to CN=<device ID>, O=<org
ID> whatever the CSR asks for, and the device is named by the enrollment's `name` (else
its ID), so a CSR may leave its subject empty. The subject rule runs last, and only for a
holder of a good claim, whose refusals are counted (edge/provisioning/enrollment.py): so
probing for device names costs a claim holder throttle budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPublicKeyTypes
from cryptography.x509.oid import NameOID

from edge.kernel.errors import ValidationError

FIELD = "csr"
MAX_PEM = 16_384
CURVES = {"secp256r1": "P-256", "secp384r1": "P-384"}
RSA_BITS = (2048, 8192)
RSA_EXPONENT = 65537
ALLOWED = "EC P-256 or P-384, or RSA of 2048 to 8192 bits"
PEM_HEADER = "-----BEGIN CERTIFICATE REQUEST-----"

# (common name) -> whether it names a device of the organization (by ID or by name)
NamesDevice = Callable[[str], bool]


@dataclass(frozen=True)
class Request:
    """A request that met every rule: the key the certificate is made out for."""

    public_key: CertificateIssuerPublicKeyTypes


def checked(pem: str, names_device: NamesDevice) -> Request:
    """The request when it meets every rule, else the ValidationError of the first broken."""
    request = _parsed(pem)
    key = _key(request)
    if not _signed_by_its_key(request):
        raise ValidationError(FIELD, "its signature does not match its key (bad signature)")
    name = _common_name(request)
    if name is not None and names_device(name):
        raise ValidationError(FIELD, "its subject names another device (leave the subject empty)")
    return Request(key)


def require_size(pem: str) -> None:
    """At most MAX_PEM characters as sent (padding included): checked before anything else,
    so that no large body is read further."""
    if len(pem) > MAX_PEM:
        raise ValidationError(FIELD, f"must be at most {MAX_PEM} characters")


def _parsed(pem: str) -> x509.CertificateSigningRequest:
    require_size(pem)
    text = pem.strip()
    if not text.startswith(PEM_HEADER):
        raise ValidationError(FIELD, "must be one PEM certificate signing request (PKCS#10)")
    try:
        return x509.load_pem_x509_csr(text.encode())
    except ValueError as exc:
        raise ValidationError(FIELD, "is not a readable PKCS#10 request") from exc


def _signed_by_its_key(request: x509.CertificateSigningRequest) -> bool:
    """A signature made with an algorithm this library does not check counts as bad."""
    try:
        return request.is_signature_valid
    except UnsupportedAlgorithm:
        return False


def _key(request: x509.CertificateSigningRequest) -> CertificateIssuerPublicKeyTypes:
    try:
        key = request.public_key()
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ValidationError(FIELD, f"its key cannot be read; allowed: {ALLOWED}") from exc
    if isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name in CURVES:
        return key
    if isinstance(key, rsa.RSAPublicKey) and RSA_BITS[0] <= key.key_size <= RSA_BITS[1]:
        return _common_exponent(key)
    raise ValidationError(FIELD, f"its key is {_describe(key)}; allowed: {ALLOWED}")


def _common_exponent(key: rsa.RSAPublicKey) -> rsa.RSAPublicKey:
    exponent = key.public_numbers().e
    if exponent != RSA_EXPONENT:
        shown = str(exponent) if exponent.bit_length() <= 64 else f"{exponent.bit_length()} bits"
        raise ValidationError(
            FIELD, f"its RSA public exponent is {shown}; allowed: {RSA_EXPONENT} only"
        )
    return key


def _describe(key: object) -> str:
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"EC on {key.curve.name}"
    if isinstance(key, rsa.RSAPublicKey):
        return f"RSA of {key.key_size} bits"
    return f"of type {type(key).__name__.removeprefix('_')}"


def _common_name(request: x509.CertificateSigningRequest) -> str | None:
    """The common name asked for (None: none); a subject this library cannot decode (its
    strings are read only now, lazily) is a 400, never an error of the server."""
    try:
        found = request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    except ValueError as exc:
        raise ValidationError(FIELD, "its subject cannot be decoded (leave it empty)") from exc
    if not found:
        return None
    value = found[0].value
    text = value.decode(errors="replace") if isinstance(value, bytes) else value
    return text.strip() or None
