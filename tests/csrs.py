"""Certificate signing requests for tests, made as a device would make them: with
`cryptography` (a request object, its PEM or DER), or with `openssl req` in a subprocess.
The private key stays with the test, as it stays on a device."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes
from cryptography.x509.oid import NameOID


def ec_key(curve: ec.EllipticCurve | None = None) -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(curve or ec.SECP256R1())


def rsa_key(bits: int, exponent: int = 65537) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=exponent, key_size=bits)


def dsa_key() -> dsa.DSAPrivateKey:
    return dsa.generate_private_key(key_size=2048)


def ed25519_key() -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.generate()


def request(
    key: CertificateIssuerPrivateKeyTypes, common_name: str | None = None
) -> x509.CertificateSigningRequest:
    """A PKCS#10 request signed by `key` (with no subject unless a common name is given)."""
    names = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else []
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return x509.CertificateSigningRequestBuilder(x509.Name(names)).sign(key, algorithm)


def csr_pem(key: CertificateIssuerPrivateKeyTypes, common_name: str | None = None) -> str:
    """`request`'s PEM text, as a device posts it."""
    return pem(request(key, common_name))


def pem(csr: x509.CertificateSigningRequest) -> str:
    return csr.public_bytes(serialization.Encoding.PEM).decode()


def der(csr: x509.CertificateSigningRequest) -> bytes:
    return csr.public_bytes(serialization.Encoding.DER)


def key_pem(key: CertificateIssuerPrivateKeyTypes) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def bad_signature(csr: x509.CertificateSigningRequest) -> str:
    """The request with one byte of its signature changed: it no longer verifies."""
    raw = bytearray(der(csr))
    raw[-3] ^= 0x01
    return pem(x509.load_der_x509_csr(bytes(raw)))


def tampered(pem: str, before: str, after: str) -> str:
    """The request with bytes of its signed part changed: its signature no longer matches."""
    assert len(before) == len(after)
    der = x509.load_pem_x509_csr(pem.encode()).public_bytes(serialization.Encoding.DER)
    assert before.encode() in der
    changed = der.replace(before.encode(), after.encode())
    return x509.load_der_x509_csr(changed).public_bytes(serialization.Encoding.PEM).decode()


def openssl_csr(folder: Path, *key_args: str) -> tuple[str, Path]:
    """A request made by `openssl req -newkey` (its key written to `folder`, never sent)."""
    key_file, csr_file = folder / "device.key", folder / "device.csr"
    subprocess.run(
        ["openssl", "req", "-new", "-newkey", *key_args, "-nodes", "-keyout", str(key_file)]
        + ["-subj", "/O=Plant 4", "-out", str(csr_file)],
        check=True,
        capture_output=True,
    )
    return csr_file.read_text(), key_file


def public_pem(key: CertificateIssuerPrivateKeyTypes) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


_PLACEHOLDER = b"PLACEHOLDER"


def undecodable_subject(key: ec.EllipticCurvePrivateKey, tag: int, raw: bytes) -> str:
    """A well-signed request whose common name is `raw` under ASN.1 tag `tag` (bytes that
    are no text of that type: `cryptography` parses the request and fails only when its
    subject is read). Made by swapping a placeholder of the same length in the signed
    part, so no length around it changes, and signing that part again."""
    assert len(raw) == len(_PLACEHOLDER)
    made = x509.load_pem_x509_csr(csr_pem(key, _PLACEHOLDER.decode()).encode())
    info = made.tbs_certrequest_bytes
    old = bytes([0x0C, len(_PLACEHOLDER)]) + _PLACEHOLDER
    assert info.count(old) == 1
    info = info.replace(old, bytes([tag, len(raw)]) + raw)
    algorithm = _element(made.public_bytes(serialization.Encoding.DER), 1)
    signature = key.sign(info, ec.ECDSA(hashes.SHA256()))
    der = _tlv(0x30, info + algorithm + _tlv(0x03, b"\x00" + signature))
    return x509.load_der_x509_csr(der).public_bytes(serialization.Encoding.PEM).decode()


def _tlv(tag: int, body: bytes) -> bytes:
    """One DER element (definite length)."""
    size = len(body)
    if size < 0x80:
        return bytes([tag, size]) + body
    count = (size.bit_length() + 7) // 8
    return bytes([tag, 0x80 | count]) + size.to_bytes(count, "big") + body


def _element(der: bytes, index: int) -> bytes:
    """The `index`th element (whole) inside the outer SEQUENCE of `der`."""
    at = _header(der, 0)[0]
    for _ in range(index):
        start, size = _header(der, at)
        at = start + size
    start, size = _header(der, at)
    return der[at : start + size]


def _header(der: bytes, at: int) -> tuple[int, int]:
    """Where the content of the element at `at` starts, and its length."""
    first = der[at + 1]
    if first < 0x80:
        return at + 2, first
    count = first & 0x7F
    return at + 2 + count, int.from_bytes(der[at + 2 : at + 2 + count], "big")
