"""A device's client certificate as its credential (edge/devices/certificate_logins.py):
accepted while in force, remembered by fingerprint, and refused at once when the registry
ends it, even when the change is written by another process (straight to storage here:
only the auth epoch tells this one), when its device is suspended, or when it expires."""

from __future__ import annotations

from datetime import timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from edge.app import Site
from edge.devices.certificate_logins import REFUSED, CertificateLogins
from edge.kernel import clock
from edge.kernel.errors import Unauthenticated
from edge.kernel.principal import Principal
from storage import device_certificates as registry
from storage import devices as device_store
from tests.world import World


@pytest.fixture
def logins(site: Site) -> CertificateLogins:
    return site.services.certificate_logins


async def _issued(world: World) -> tuple[str, bytes]:
    admin = Principal("user", world.tenant.admin_id, "session", world.tenant.org_id)
    made = await world.site.services.devices.create(admin, {"name": "pump"})
    cert = x509.load_pem_x509_certificate(made["certificate"].encode())
    return made["id"], cert.public_bytes(serialization.Encoding.DER)


async def test_a_certificate_revoked_elsewhere_is_refused_at_once(
    world: World, logins: CertificateLogins
) -> None:
    device_id, der = await _issued(world)
    found = logins.accepted(der)
    assert found is not None and found.device.id == device_id
    assert logins.principal(der) == Principal("device", device_id, None, world.tenant.org_id)
    now = clock.now_iso()
    await world.site.services.db.write(
        lambda c: registry.revoke(c, found.serial, now, "key_compromise")
    )
    assert logins.accepted(der) is None
    with pytest.raises(Unauthenticated, match=REFUSED):
        logins.principal(der)


async def test_a_suspended_device_loses_its_certificate(
    world: World, logins: CertificateLogins
) -> None:
    device_id, der = await _issued(world)
    assert logins.accepted(der) is not None
    await world.site.services.db.write(
        lambda c: device_store.patch(c, device_id, {"is_active": False})
    )
    assert logins.accepted(der) is None


async def test_a_remembered_certificate_is_refused_once_it_expires(
    world: World, logins: CertificateLogins
) -> None:
    _, der = await _issued(world)
    assert logins.accepted(der) is not None  # remembered now
    days = world.site.services.config.device_certificate_days
    clock.advance(timedelta(days=days + 1))
    assert logins.accepted(der) is None
