"""Messages are queued in the durable outbox with their texts filled in."""

from __future__ import annotations

import pytest

from edge.app import Site
from edge.messages import Recipient
from storage import outbox
from tests.conftest import Api
from tests.tenants import new_tenant


@pytest.fixture
async def to(site: Site, api: Api) -> Recipient:
    tenant = await new_tenant(site, api, "Clinic One", "clinic")
    return Recipient(
        user_id=tenant.admin_id,
        email="nurse@clinic.test",
        phone="+15550001111",
        username="nurse",
        org_id=tenant.org_id,
        org_name="Clinic One",
    )


def queued(site: Site, purpose: str) -> list[dict[str, object]]:
    return site.services.db.read(lambda c: outbox.by_purpose(c, purpose))


async def test_invitation_carries_the_temporary_password(site: Site, to: Recipient) -> None:
    await site.services.messages.invitation(to, "Temp-Pass-123")
    [mail] = queued(site, "invitation")
    assert mail["channel"] == "mail" and mail["recipient"] == "nurse@clinic.test"
    assert mail["subject"] == "Your Clinic One account"
    assert "Temp-Pass-123" in str(mail["body_text"]) and mail["status"] == "pending"


async def test_recovery_and_sms_code(site: Site, to: Recipient) -> None:
    await site.services.messages.account_recovery(to, "reset-token-xyz", 24)
    await site.services.messages.sms_code(to, "+15550001111", "123456")
    [mail] = queued(site, "account_recovery")
    assert "reset-token-xyz" in str(mail["body_text"]) and "24 hours" in str(mail["body_text"])
    [sms] = queued(site, "sms_code")
    assert sms["channel"] == "sms" and sms["recipient"] == "+15550001111"
    assert sms["body_text"] == "Clinic One: your verification code is 123456"
