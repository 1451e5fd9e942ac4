"""Certificates for keys the site CA never sees: a device sends a signing request (PKCS#10)
and gets a client certificate for the public key in it, while its private key stays on the
device (docs/provisioning.md).

Whether a request is acceptable (its key, its signature, its subject) is the caller's
question (edge/provisioning/csr.py); this module only signs, with the same extensions and
lifetime as the certificates `ca.SiteCa.issue_client` makes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPublicKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from edge.certificates.ca import CA_DAYS as CLIENT_DAYS
from edge.certificates.ca import load_or_create_ca, serial_of
from edge.kernel import clock


@dataclass(frozen=True)
class SignedCertificate:
    """What a device is given for its own key: the certificate (PEM), its public key (PEM),
    and the serial and end of validity the registry keeps."""

    certificate: str
    public_key: str
    serial: str
    not_after: dt.datetime


class CsrSigner:
    """Signs client certificates for given public keys with the site CA's key."""

    def __init__(self, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate) -> None:
        self._key = key
        self.cert = cert

    @classmethod
    def open(cls, data_dir: Path) -> CsrSigner:
        return cls(*load_or_create_ca(data_dir))

    def sign(
        self, public_key: CertificateIssuerPublicKeyTypes, common_name: str, organization: str
    ) -> SignedCertificate:
        """A client certificate for `public_key`: CN the device ID, O its organization,
        valid as long as the CA that signs it (as `SiteCa.issue_client`'s)."""
        subject = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
                x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            ]
        )
        now = clock.now().replace(tzinfo=dt.UTC)
        days = min(CLIENT_DAYS, (self.cert.not_valid_after_utc - now).days)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self.cert.subject)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_client_usage(public_key), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        public = public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return SignedCertificate(
            cert.public_bytes(serialization.Encoding.PEM).decode(),
            public.decode(),
            serial_of(cert),
            cert.not_valid_after_utc,
        )


def _client_usage(public_key: CertificateIssuerPublicKeyTypes) -> x509.KeyUsage:
    """Signing for any key; key encipherment only where the key can encipher (RSA)."""
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=not isinstance(public_key, ec.EllipticCurvePublicKey),
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )
