"""The device's own key pair and its certificate signing request (PKCS#10), with
`cryptography`: an EC key on P-256 (what the broker's TLS listener and every device TLS
stack speak), made on the device and never sent anywhere; the server signs a certificate
for its public half (docs/provisioning.md).
"""

from __future__ import annotations

from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from edge_agent.files import write_bytes


def private_key(path: Path) -> ec.EllipticCurvePrivateKey:
    """The key kept at `path` (0600), made there first when there is none: an attempt that
    failed after making it tries again with the same key."""
    if path.exists():
        loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{path}: not an EC private key")
        return loaded
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    write_bytes(path, pem)
    return key


def csr(key: ec.EllipticCurvePrivateKey) -> str:
    """A CSR for the key with an empty subject: the certificate is made out to the new
    device's ID whatever a subject says, and a name there could be refused as another's."""
    request = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([]))
    return request.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()
