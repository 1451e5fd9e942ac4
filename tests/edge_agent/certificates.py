"""Certificates for the agent's renewal tests (test_pair.py, test_renewal.py): real ones,
self-signed for a key, of a chosen life and age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def certificate_for(key: ec.EllipticCurvePrivateKey, days: float, lived: float = 0) -> bytes:
    """A self-signed certificate of `days` for `key`, `lived` days of it gone by NOW."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dev1")])
    start = NOW - timedelta(days=lived)
    made = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + timedelta(days=days))
        .sign(key, hashes.SHA256())
    )
    return made.public_bytes(serialization.Encoding.PEM)
