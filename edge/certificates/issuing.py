"""The one set of rules a certificate signing request (PKCS#10) must meet before the site CA
signs the key it carries (`SiteCa.sign_client`), for enrollment (a new device, REST or EST
`simpleenroll`) and renewal (REST or EST `simplereenroll`) alike (docs/provisioning.md).
The device keeps its private key; only the public key in the request reaches the CA, which
sets the subject itself (O = the org, CN = the device ID), so a request may leave its
subject empty.

Each broken rule is a 400 on `csr` that names it, checked in this order:
- its size as sent (padding included) is at most MAX_BYTES, before anything else is read;
- it is one PEM `CERTIFICATE REQUEST` with nothing before or after it (the JSON routes,
  or EST from a lenient tool) or DER (EST, base64 decoded) that parses;
- its key is EC on P-256 or P-384, or RSA of 2048 to 8192 bits with the public exponent
  65537 (what the TLS stacks of devices and the broker's listener speak; an odd exponent
  is a sign of a broken or hostile key maker); no Ed25519, DSA or small RSA;
- its signature is good: whoever sent it holds the private key;
- no common name of its subject names another device, and a subject that cannot be decoded
  is refused too (never an error of the server). Which names are another device's is the
  caller's question (`NamesAnother`): renewal refuses any name but the device's own ID;
  enrollment, any ID or name of a device of the claim's org (edge/provisioning).
"""

from __future__ import annotations

from collections.abc import Callable

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from edge.certificates.ca import ClientKey
from edge.kernel.errors import ValidationError

FIELD = "csr"
MAX_BYTES = 16_384
CURVES = {"secp256r1": "P-256", "secp384r1": "P-384"}
RSA_BITS = (2048, 8192)
RSA_EXPONENT = 65537
ALLOWED = "EC P-256 or P-384, or RSA of 2048 to 8192 bits"
PEM_HEADER = "-----BEGIN CERTIFICATE REQUEST-----"
PEM_FOOTER = "-----END CERTIFICATE REQUEST-----"

# (a common name of the request's subject) -> whether it names another device
NamesAnother = Callable[[str], bool]
# A request as sent: PEM text (the JSON routes), or bytes (EST: DER, or PEM from a lenient tool)
Sent = str | bytes


def checked(sent: Sent, names_another: NamesAnother) -> ClientKey:
    """The key to certify when the request meets every rule, else the ValidationError of
    the first rule it breaks."""
    request = parsed(sent)
    key = _key(request)
    if not _signed_by_its_key(request):
        raise ValidationError(FIELD, "its signature does not match its key (bad signature)")
    if any(names_another(name) for name in _common_names(request)):
        raise ValidationError(FIELD, "its subject names another device (leave the subject empty)")
    return key


def require_size(sent: Sent) -> None:
    """At most MAX_BYTES as sent (padding included): checked before anything else, so that
    no large body is read further."""
    if len(sent) > MAX_BYTES:
        unit = "characters" if isinstance(sent, str) else "bytes"
        raise ValidationError(FIELD, f"must be at most {MAX_BYTES} {unit}")


def parsed(sent: Sent) -> x509.CertificateSigningRequest:
    """The request, from PEM (text, or bytes that begin as PEM) or DER (other bytes)."""
    require_size(sent)
    if isinstance(sent, bytes) and not sent.lstrip().startswith(b"-----BEGIN"):
        return _loaded(x509.load_der_x509_csr, sent)
    text = sent.decode(errors="replace") if isinstance(sent, bytes) else sent
    text = text.strip()
    if not _one_pem_request(text):
        raise ValidationError(FIELD, "must be one PEM certificate signing request (PKCS#10)")
    return _loaded(x509.load_pem_x509_csr, text.encode())


def _one_pem_request(text: str) -> bool:
    """One PEM block and nothing around it: the PEM loader reads the first block and
    ignores the rest, so a second request or trailing junk would pass unseen. (A block
    without its end line is left to the loader: not readable.)"""
    ends_after = PEM_FOOTER in text and not text.endswith(PEM_FOOTER)
    return (
        text.startswith(PEM_HEADER)
        and not ends_after
        and text.count("-----BEGIN") == 1
        and text.count("-----END") <= 1
    )


def _loaded(
    load: Callable[[bytes], x509.CertificateSigningRequest], data: bytes
) -> x509.CertificateSigningRequest:
    try:
        return load(data)
    except ValueError as exc:
        raise ValidationError(FIELD, "is not a readable PKCS#10 request") from exc


def _signed_by_its_key(request: x509.CertificateSigningRequest) -> bool:
    """A signature made with an algorithm this library does not check counts as bad."""
    try:
        return request.is_signature_valid
    except UnsupportedAlgorithm:
        return False


def _key(request: x509.CertificateSigningRequest) -> ClientKey:
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


def _common_names(request: x509.CertificateSigningRequest) -> list[str]:
    """The common names asked for (blank ones left out); a subject this library cannot
    decode (its strings are read only now, lazily) is a 400, never an error of the server."""
    try:
        found = request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        values = [attribute.value for attribute in found]
    except ValueError as exc:
        raise ValidationError(FIELD, "its subject cannot be decoded (leave it empty)") from exc
    names = [v.decode(errors="replace") if isinstance(v, bytes) else v for v in values]
    return [name.strip() for name in names if name.strip()]
