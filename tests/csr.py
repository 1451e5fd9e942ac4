"""Certificate signing requests as a device makes them (the `cryptography` package): a key
pair it keeps, and a PKCS#10 request for its public key."""

from __future__ import annotations

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def request(key: PrivateKey, common_name: str | None) -> x509.CertificateSigningRequest:
    names = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else []
    return x509.CertificateSigningRequestBuilder(x509.Name(names)).sign(key, hashes.SHA256())


def pem(csr: x509.CertificateSigningRequest) -> str:
    return csr.public_bytes(serialization.Encoding.PEM).decode()


def der(csr: x509.CertificateSigningRequest) -> bytes:
    return csr.public_bytes(serialization.Encoding.DER)


def key_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def tampered(csr: x509.CertificateSigningRequest) -> str:
    """The request with one byte of its signature changed: it no longer verifies."""
    raw = bytearray(der(csr))
    raw[-3] ^= 0x01
    loaded = x509.load_der_x509_csr(bytes(raw))
    return loaded.public_bytes(serialization.Encoding.PEM).decode()
