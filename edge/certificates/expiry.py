"""When certificates end: device certificates in force that end within EXPIRING (what
`edge check` warns about and `/metrics` counts), and the site CA itself, which `edge check`
warns about CA_WARNING ahead so there is time to roll it (docs/provisioning.md)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cryptography import x509

from edge.certificates.ca import CA_CERT
from edge.kernel import clock
from storage import layout

EXPIRING = dt.timedelta(days=30)
CA_WARNING = dt.timedelta(days=365)


def window() -> tuple[str, str]:
    """(now, now + EXPIRING) as the registry's timestamps."""
    now = clock.now()
    return clock.iso(now), clock.iso(now + EXPIRING)


def ca_not_after(data_dir: Path) -> dt.datetime | None:
    """When the site CA ends; None when there is none (yet) or it cannot be read."""
    try:
        pem = (data_dir / layout.CA_DIR / CA_CERT).read_bytes()
        return x509.load_pem_x509_certificate(pem).not_valid_after_utc
    except (OSError, ValueError):
        return None
