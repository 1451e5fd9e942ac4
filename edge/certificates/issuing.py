"""Certificate signing requests (PKCS#10) a device sends to renew its certificate: the
rules a request must meet before the site CA signs the key it carries. The device keeps
its private key; only the public key in the request reaches the CA (`SiteCa.sign_client`),
which sets the subject itself (O = the org, CN = the device ID).

The rules, each a 400 naming `csr` (docs/provisioning.md):
- PEM (`-----BEGIN CERTIFICATE REQUEST-----`), or DER as EST sends it (base64 decoded);
- its signature verifies with the key it carries (the sender holds the private key);
- the key is EC on P-256 or P-384, or RSA of 2048 to 8192 bits;
- a subject CN, when given, is the device's own ID: a request naming another is refused.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from edge.certificates.ca import ClientKey
from edge.kernel.errors import ValidationError

FIELD = "csr"
CURVES = (ec.SECP256R1, ec.SECP384R1)
RSA_BITS = (2048, 8192)
MAX_BYTES = 16 * 1024


def parse(data: bytes) -> x509.CertificateSigningRequest:
    """The request, from PEM or DER; a 400 when it is neither."""
    if len(data) > MAX_BYTES:
        raise ValidationError(FIELD, f"is over {MAX_BYTES} bytes")
    try:
        if data.lstrip().startswith(b"-----BEGIN"):
            return x509.load_pem_x509_csr(data)
        return x509.load_der_x509_csr(data)
    except ValueError:
        raise ValidationError(FIELD, "is not a PKCS#10 certificate signing request") from None


def checked_key(csr: x509.CertificateSigningRequest, device_id: str) -> ClientKey:
    """The public key to certify, once the request meets every rule."""
    if not csr.is_signature_valid:
        raise ValidationError(FIELD, "its signature does not verify with the key it carries")
    key = csr.public_key()
    if isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, CURVES):
        pass
    elif isinstance(key, rsa.RSAPublicKey) and RSA_BITS[0] <= key.key_size <= RSA_BITS[1]:
        pass
    else:
        raise ValidationError(
            FIELD, "the key must be EC on P-256 or P-384, or RSA of 2048 to 8192 bits"
        )
    named = csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if any(attribute.value != device_id for attribute in named):
        raise ValidationError(FIELD, "the subject's CN names another device (give yours, or none)")
    return key
