"""Helpers for the sign-in, challenge and MFA tests: an org's MFA policy, sign-in and
challenge calls, enrolment, codes from the outbox. Not a world: tenants come from
tests/tenants.py or the world (tests/world.py)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pyotp

from edge.app import Site
from edge.kernel import clock
from storage import outbox
from storage import users as user_store
from storage.rows import update
from tests.conftest import Api
from tests.tenants import PASSWORD, Tenant


async def require_mfa(site: Site, org_id: str, required: bool = True) -> None:
    row = site.services.orgs.get_row(org_id)
    settings = {**row.settings, "mfa_required": required}
    await site.services.db.write(
        lambda c: update(c, "orgs", "id", org_id, {"settings": json.dumps(settings)})
    )


async def login(
    tenant: Tenant, login_name: str, password: str = PASSWORD
) -> tuple[int, dict[str, Any]]:
    form = {"grant_type": "password", "username": login_name, "password": password}
    return await tenant.api.call("POST", "/v2/auth/token", data={**form, "client_id": tenant.alias})


async def answer(api: Api, session: str, **form: str) -> tuple[int, dict[str, Any]]:
    return await api.call("POST", "/v2/auth/challenge", session, data=form)


def user(site: Site, user_id: str) -> dict[str, Any]:
    row = site.services.db.read(lambda c: user_store.get(c, user_id))
    assert row is not None
    return row


async def enroll_software(site: Site, user_id: str) -> str:
    """Software MFA set up through the service; returns the TOTP secret.

    Confirmed with the previous time step's code (accepted for clock drift), so that the
    current code, which a test then signs in with, has not been used yet.
    """
    secret = (await site.services.mfa.secret_code(user(site, user_id)))["secret_code"]
    earlier = pyotp.TOTP(secret).at(clock.now() - timedelta(seconds=30))
    await site.services.mfa.add_software(user(site, user_id), earlier, False)
    return str(secret)


def totp(secret: str) -> str:
    return pyotp.TOTP(secret).at(clock.now())


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


def last_sms(site: Site) -> tuple[str, str]:
    """(phone, code) of the newest SMS in the outbox."""
    rows = site.services.db.read(lambda c: outbox.by_purpose(c, "sms_code"))
    assert rows, "no SMS was queued"
    found = re.search(r"\b(\d{6})\b", rows[-1]["body_text"])
    assert found is not None
    return rows[-1]["recipient"], found.group(1)


def sms_count(site: Site) -> int:
    return len(site.services.db.read(lambda c: outbox.by_purpose(c, "sms_code")))


async def enroll_sms(site: Site, user_id: str, phone: str = "+15550102000") -> None:
    sms = site.services.sms_mfa
    await sms.add(user(site, user_id), {"phone_number": phone})
    await sms.add(
        user(site, user_id), {"phone_number": phone, "verification_code": last_sms(site)[1]}
    )
