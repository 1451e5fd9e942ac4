"""The device's key and certificate as one pair on disk, across a renewal (renewal.py).

A renewal makes its new key beside the working one (`<key_file>.next`, 0600) and never
touches the working key until the server's certificate for the new key is in hand; that
certificate is written beside the working one (`<certificate_file>.next`), then the two
are renamed over the working files, key first. A kill can stop this between any two
steps; `recover`, run before the agent signs in, finishes or undoes what was begun, so the
pair the agent signs in with always matches:

| Found | Means | Done |
|---|---|---|
| `key.next` alone | the answer never came (or was lost) | kept: the next attempt's key |
| `key.next` and `pem.next`, matching | the answer came, nothing renamed yet | both renamed |
| `pem.next` alone, matching the key | the key was renamed, not the certificate | renamed |
| `pem.next` matching neither | cannot happen by this code | deleted |
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from edge_agent.files import replace

PENDING = ".next"


@dataclass(frozen=True)
class Pair:
    certificate_file: Path
    key_file: Path

    @property
    def next_key(self) -> Path:
        return self.key_file.with_name(self.key_file.name + PENDING)

    @property
    def next_certificate(self) -> Path:
        return self.certificate_file.with_name(self.certificate_file.name + PENDING)

    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.certificate_file.read_bytes())

    def commit(self) -> None:
        """The pending pair becomes the working one: the key, then the certificate."""
        if self.next_key.exists():
            replace(self.next_key, self.key_file)
        replace(self.next_certificate, self.certificate_file)

    def recover(self) -> str | None:
        """Finishes or undoes a renewal a kill interrupted; says what it did, if anything."""
        if not self.next_certificate.exists():
            return None
        waiting = self.next_key if self.next_key.exists() else self.key_file
        if matches(self.next_certificate, waiting):
            self.commit()
            return "finished the renewal a stop interrupted"
        self.next_certificate.unlink()
        return f"{self.next_certificate}: matched no key of the device; deleted"


def matches(certificate_file: Path, key_file: Path) -> bool:
    """Whether the certificate in one file is for the private key in the other."""
    try:
        certificate = x509.load_pem_x509_certificate(certificate_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return False
    return certificate.public_key() == key.public_key()
