"""The site's own certificate authority, in `<data>/ca/`, and the server certificate it issues.

Made on first use: an EC P-256 CA valid for 10 years, and a server certificate for the
names the operator lists (valid 825 days, re-issued when missing or when the names change).
Clients that trust `ca/ca.pem` can then reach the server over HTTPS on the LAN. Devices get
their client certificates from the same CA (`SiteCa`, kept in memory once loaded), for
`device_certificate_days` (never past the CA's own end), and renew them before they end
(docs/provisioning.md); the CA also signs the CRL of ended ones (`revocation.py`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from edge.kernel import clock
from storage import layout

CA_KEY, CA_CERT = layout.CA_KEY_FILE, layout.CA_CERT_FILE
SERVER_KEY, SERVER_CERT = layout.SERVER_KEY_FILE, layout.SERVER_CERT_FILE
CA_DAYS, SERVER_DAYS = 3650, 825
# How long a CRL stays current: tools fetch a fresh one at least this often.
CRL_HOURS = 24


@dataclass(frozen=True)
class ServerFiles:
    cert: Path
    key: Path
    ca: Path


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def load_or_create_ca(data_dir: Path) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    folder = data_dir / layout.CA_DIR
    folder.mkdir(mode=layout.SECRET_DIR_MODE, parents=True, exist_ok=True)
    if not (folder / CA_KEY).exists():
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "edge site CA")])
        cert = (
            _builder(name, name, key.public_key(), CA_DAYS)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_usage(cert_sign=True), critical=True)
            .sign(key, hashes.SHA256())
        )
        layout.write_secret(folder / CA_KEY, _pem_key(key))
        (folder / CA_CERT).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    loaded = serialization.load_pem_private_key((folder / CA_KEY).read_bytes(), password=None)
    if not isinstance(loaded, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{folder / CA_KEY} is not an EC private key")
    return loaded, x509.load_pem_x509_certificate((folder / CA_CERT).read_bytes())


def load_or_create_ca_file(data_dir: Path) -> Path:
    """The CA's certificate file (`ca/ca.pem`), the CA made first when there is none."""
    load_or_create_ca(data_dir)
    return data_dir / layout.CA_DIR / CA_CERT


def server_certificate(data_dir: Path, names: list[str]) -> ServerFiles:
    """The server certificate for these host names and addresses, issued when needed."""
    folder = data_dir / layout.CA_DIR
    files = ServerFiles(folder / SERVER_CERT, folder / SERVER_KEY, folder / CA_CERT)
    sound = files.cert.exists() and server_certificate_problem(data_dir) is None
    if sound and _covers(files.cert, names):
        return files
    ca_key, ca_cert = load_or_create_ca(data_dir)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    cert = (
        _builder(subject, ca_cert.subject, key.public_key(), SERVER_DAYS)
        .add_extension(x509.SubjectAlternativeName(_alt_names(names)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    layout.write_secret(files.key, _pem_key(key))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return files


@dataclass(frozen=True)
class Issued:
    """A certificate the site CA signed for a device, as the registry records it."""

    certificate: str  # PEM
    serial: str
    fingerprint: str  # SHA-256 of the DER, lowercase hex
    not_before: dt.datetime
    not_after: dt.datetime


@dataclass(frozen=True)
class ClientCredentials(Issued):
    """What a device is given once when the server makes its key: the certificate, the
    key pair (PEM), and what the registry keeps."""

    private_key: str = field(repr=False)
    public_key: str


ClientKey = ec.EllipticCurvePublicKey | rsa.RSAPublicKey


class SiteCa:
    """The site CA, loaded once: issues device certificates (lasting `client_days`, or
    until the CA itself ends), checks presented ones, and signs the CRL."""

    def __init__(
        self, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate, client_days: int = CA_DAYS
    ) -> None:
        self._key = key
        self.cert = cert
        self.pem = cert.public_bytes(serialization.Encoding.PEM)
        self.client_days = client_days

    @classmethod
    def open(cls, data_dir: Path, client_days: int = CA_DAYS) -> SiteCa:
        return cls(*load_or_create_ca(data_dir), client_days)

    def issue_client(self, common_name: str, organization: str) -> ClientCredentials:
        """A new key pair and a client certificate for it (CN = the device ID)."""
        key = ec.generate_private_key(ec.SECP256R1())
        made = self.sign_client(key.public_key(), common_name, organization)
        public = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return ClientCredentials(
            made.certificate,
            made.serial,
            made.fingerprint,
            made.not_before,
            made.not_after,
            private_key=_pem_key(key).decode(),
            public_key=public.decode(),
        )

    def sign_client(self, public: ClientKey, common_name: str, organization: str) -> Issued:
        """A client certificate for a key the device holds (its own, from a CSR, or one
        made here): subject O = the org, CN = the device ID, whatever the request said."""
        subject = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
                x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            ]
        )
        days = min(self.client_days, (self.cert.not_valid_after_utc - clock.now()).days)
        cert = (
            _builder(subject, self.cert.subject, public, days)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        return issued_of(cert)

    def crl(self, ended: list[tuple[int, dt.datetime, x509.ReasonFlags]], number: int) -> bytes:
        """The CRL (DER) of these (serial, when ended, why), valid for CRL_HOURS."""
        now = clock.now()
        builder = (
            x509.CertificateRevocationListBuilder()
            .issuer_name(self.cert.subject)
            .last_update(now - dt.timedelta(minutes=5))
            .next_update(now + dt.timedelta(hours=CRL_HOURS))
            .add_extension(x509.CRLNumber(number), critical=False)
        )
        for serial, when, reason in ended:
            entry = (
                x509.RevokedCertificateBuilder()
                .serial_number(serial)
                .revocation_date(when)
                .add_extension(x509.CRLReason(reason), critical=False)
                .build()
            )
            builder = builder.add_revoked_certificate(entry)
        crl = builder.sign(self._key, hashes.SHA256())
        return crl.public_bytes(serialization.Encoding.DER)

    def issued(self, certificate_der: bytes) -> x509.Certificate | None:
        """The certificate when this CA signed it and it is within its validity; else None.
        (Whether it was since ended is the registry's question, not the signature's.)"""
        try:
            cert = x509.load_der_x509_certificate(certificate_der)
            cert.verify_directly_issued_by(self.cert)
        except (ValueError, TypeError, InvalidSignature):
            return None
        return cert if within_validity(cert) else None


def within_validity(cert: x509.Certificate) -> bool:
    return cert.not_valid_before_utc <= clock.now() <= cert.not_valid_after_utc


def issued_of(cert: x509.Certificate) -> Issued:
    return Issued(
        cert.public_bytes(serialization.Encoding.PEM).decode(),
        serial_of(cert),
        fingerprint_of(cert.public_bytes(serialization.Encoding.DER)),
        cert.not_valid_before_utc,
        cert.not_valid_after_utc,
    )


def fingerprint_of(certificate_der: bytes) -> str:
    return hashlib.sha256(certificate_der).hexdigest()


def serial_of(cert: x509.Certificate) -> str:
    return format(cert.serial_number, "x")


def _builder(
    subject: x509.Name, issuer: x509.Name, public: ClientKey, days: int
) -> x509.CertificateBuilder:
    now = clock.now().replace(tzinfo=dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
    )


def _usage(cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=not cert_sign,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _alt_names(names: list[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for name in names:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            out.append(x509.DNSName(name))
    return out


def server_certificate_problem(data_dir: Path) -> str | None:
    """What is wrong with an issued server certificate and its key (None: sound, or none
    issued yet). It is derived from the CA, so a damaged one is simply issued again."""
    folder = data_dir / layout.CA_DIR
    cert_path, key_path = folder / SERVER_CERT, folder / SERVER_KEY
    if not cert_path.exists() and not key_path.exists():
        return None
    return pair_problem(cert_path, key_path)


def pair_problem(cert_path: Path, key_path: Path) -> str | None:
    """Whether a certificate (the first of a chain) and its private key load and belong
    together; what is wrong, else None."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return f"the certificate {cert_path} or its key {key_path} is missing or damaged"
    if cert.public_key() != key.public_key():
        return f"the key {key_path} does not belong to the certificate {cert_path}"
    return None


def certificate_names(cert_path: Path) -> set[str]:
    """The DNS names and addresses a certificate is for (empty if it cannot be read)."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        held = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, x509.ExtensionNotFound):
        return set()
    present = {str(v) for v in held.get_values_for_type(x509.DNSName)}
    return present | {str(v) for v in held.get_values_for_type(x509.IPAddress)}


def _covers(cert_path: Path, names: list[str]) -> bool:
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    if cert.not_valid_after_utc < clock.now() + dt.timedelta(days=30):
        return False
    return set(names) <= certificate_names(cert_path)
