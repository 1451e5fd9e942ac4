"""Certificate signing requests for the provisioning tests, made as a device would make
them: with `cryptography`, or with `openssl req` in a subprocess. The private key stays
with the test, as it stays on a device."""

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


def rsa_key(bits: int) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def dsa_key() -> dsa.DSAPrivateKey:
    return dsa.generate_private_key(key_size=2048)


def ed25519_key() -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.generate()


def csr_pem(key: CertificateIssuerPrivateKeyTypes, common_name: str | None = None) -> str:
    """A PKCS#10 request signed by `key` (with no subject unless a common name is given)."""
    names = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else []
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    request = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names))
    return request.sign(key, algorithm).public_bytes(serialization.Encoding.PEM).decode()


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
