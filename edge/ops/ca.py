"""The site's own certificate authority, in `<data>/ca/`, and the server certificate it issues.

Made on first use: an EC P-256 CA valid for 10 years, and a server certificate for the
names the operator lists (valid 825 days, re-issued when missing or when the names change).
Clients that trust `ca/ca.pem` can then reach the server over HTTPS on the LAN. Devices get
their certificates from the same CA.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from edge import clock
from storage import layout

CA_KEY, CA_CERT = "ca.key", "ca.pem"
SERVER_KEY, SERVER_CERT = "server.key", "server.pem"
CA_DAYS, SERVER_DAYS = 3650, 825


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


def server_certificate(data_dir: Path, names: list[str]) -> ServerFiles:
    """The server certificate for these host names and addresses, issued when needed."""
    folder = data_dir / layout.CA_DIR
    files = ServerFiles(folder / SERVER_CERT, folder / SERVER_KEY, folder / CA_CERT)
    if files.cert.exists() and _covers(files.cert, names):
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


def _builder(
    subject: x509.Name, issuer: x509.Name, public: ec.EllipticCurvePublicKey, days: int
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


def _covers(cert_path: Path, names: list[str]) -> bool:
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    if cert.not_valid_after_utc < clock.now() + dt.timedelta(days=30):
        return False
    held = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    present = {str(v) for v in held.get_values_for_type(x509.DNSName)}
    present |= {str(v) for v in held.get_values_for_type(x509.IPAddress)}
    return set(names) <= present
