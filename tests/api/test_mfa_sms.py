"""SMS MFA, row by row of the interface's state table, plus removal and recovery setup."""

from __future__ import annotations

import pytest

from edge.app import Site
from tests.sign_in import (
    enroll_sms,
    enroll_software,
    last_sms,
    login,
    require_mfa,
    sms_count,
    totp,
    user,
    wrong,
)
from tests.tenants import Tenant

PHONE = "+15550102000"


async def signed_in(tenant: Tenant, name: str, **profile: object) -> tuple[str, str]:
    user_id = await tenant.add_user(name, **profile)
    return user_id, await tenant.token(f"{name}@clinic.test")


async def put_sms(tenant: Tenant, token: str, **form: str) -> tuple[int, dict[str, object]]:
    return await tenant.api.call("PUT", "/v2/auth/mfa/sms", token, data=form)


async def test_row1_phase_one_stores_pending_sends_otp_ignores_set_preferred(
    site: Site, tenant: Tenant
) -> None:
    user_id, token = await signed_in(tenant, "ann")
    await enroll_software(site, user_id)
    status, body = await put_sms(
        tenant, token, phone_number="+1 (555) 010-2000", set_preferred="true"
    )
    assert status == 200
    assert body["pending_phone_number"] == PHONE and body["message"]
    assert "recovery_code" not in body
    assert last_sms(site)[0] == PHONE
    row = user(site, user_id)
    assert row["pending_phone_number"] == PHONE
    assert not row["sms_mfa_enabled"] and not row["phone_number_verified"]
    assert row["preferred_mfa"] == "SOFTWARE"  # set_preferred ignored in phase 1


async def test_row2_valid_code_enables_sms_mfa(site: Site, tenant: Tenant) -> None:
    user_id, token = await signed_in(tenant, "ben")
    await put_sms(tenant, token, phone_number=PHONE)
    status, body = await put_sms(
        tenant, token, phone_number=PHONE, verification_code=last_sms(site)[1]
    )
    assert status == 200 and body["recovery_code"] and body["message"]
    row = user(site, user_id)
    assert row["sms_mfa_enabled"] and row["phone_number_verified"]
    assert row["phone_number"] == PHONE and row["preferred_mfa"] == "SMS"  # was unset


@pytest.mark.parametrize(("set_preferred", "preferred"), [("true", "SMS"), ("false", "SOFTWARE")])
async def test_row2_applies_set_preferred(
    site: Site, tenant: Tenant, set_preferred: str, preferred: str
) -> None:
    user_id, token = await signed_in(tenant, "cat")
    await enroll_software(site, user_id)
    await put_sms(tenant, token, phone_number=PHONE)
    code = last_sms(site)[1]
    status, _ = await put_sms(
        tenant, token, phone_number=PHONE, verification_code=code, set_preferred=set_preferred
    )
    assert status == 200
    assert user(site, user_id)["preferred_mfa"] == preferred


async def test_row3_invalid_code_removes_phone_keeps_pending(site: Site, tenant: Tenant) -> None:
    user_id, token = await signed_in(tenant, "dan", phone_number="+15550109999")
    await put_sms(tenant, token, phone_number=PHONE)
    code = last_sms(site)[1]
    status, body = await put_sms(tenant, token, phone_number=PHONE, verification_code=wrong(code))
    assert (status, body) == (400, {"message": "Invalid Code"})
    row = user(site, user_id)
    assert row["phone_number"] is None and not row["phone_number_verified"]
    assert row["pending_phone_number"] == PHONE and not row["sms_mfa_enabled"]
    # the spent OTP no longer works; a new one is requested without re-entering the number
    status, _ = await put_sms(tenant, token, phone_number=PHONE, verification_code=code)
    assert status == 400
    assert (await put_sms(tenant, token, phone_number=PHONE))[0] == 200
    status, _ = await put_sms(
        tenant, token, phone_number=PHONE, verification_code=last_sms(site)[1]
    )
    assert status == 200 and user(site, user_id)["sms_mfa_enabled"]


async def test_row3_new_code_without_re_entering_the_number(site: Site, tenant: Tenant) -> None:
    """Raw HTTP, as the SDK always sends the number: after a wrong code, phase 1 with no
    `phone_number` texts a new code to the pending number."""
    user_id, token = await signed_in(tenant, "don")
    await put_sms(tenant, token, phone_number="+1 555 010 2000")
    first = last_sms(site)[1]
    assert (await put_sms(tenant, token, verification_code=wrong(first)))[0] == 400
    before = sms_count(site)
    status, body = await tenant.api.call("PUT", "/v2/auth/mfa/sms", token)
    assert status == 200 and body["pending_phone_number"] == PHONE
    assert body["verification_pending"] is True and sms_count(site) == before + 1
    to, code = last_sms(site)
    assert to == PHONE and (await put_sms(tenant, token, verification_code=code))[0] == 200
    row = user(site, user_id)
    assert row["sms_mfa_enabled"] and row["phone_number"] == PHONE


async def test_phase_one_without_number_or_pending_is_400(site: Site, tenant: Tenant) -> None:
    _, token = await signed_in(tenant, "dot")
    before = sms_count(site)
    status, body = await put_sms(tenant, token, set_preferred="true")
    assert (status, body) == (400, {"message": "phone_number: is required"})
    assert (await tenant.api.call("PUT", "/v2/auth/mfa/sms", token))[0] == 400
    assert sms_count(site) == before


async def test_phase_one_needs_a_valid_phone(tenant: Tenant) -> None:
    _, token = await signed_in(tenant, "eve")
    status, body = await put_sms(tenant, token, phone_number="555")
    assert status == 400 and body["message"].startswith("phone_number:")


async def test_row4_disable_without_policy(site: Site, tenant: Tenant) -> None:
    user_id, token = await signed_in(tenant, "fin")
    await enroll_sms(site, user_id)
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/sms", token))[0] == 200
    row = user(site, user_id)
    assert not row["sms_mfa_enabled"] and row["preferred_mfa"] is None
    assert (await tenant.api.call("GET", f"/v2/users/{user_id}", token))[0] == 200


async def test_row4_disable_refused_under_policy_unless_another_remains(
    site: Site, tenant: Tenant
) -> None:
    user_id, token = await signed_in(tenant, "gus")
    await enroll_sms(site, user_id)
    await require_mfa(site, tenant.org_id)
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/sms", token))[0] == 403
    await enroll_software(site, user_id)
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/sms", token))[0] == 200
    assert (await tenant.api.call("GET", f"/v2/users/{user_id}", token))[0] == 200


async def test_row4_required_sms_removed_by_recovery_code_revokes_tokens(
    site: Site, tenant: Tenant
) -> None:
    user_id, token = await signed_in(tenant, "hap")
    sms = site.services.sms_mfa
    await sms.add(user(site, user_id), {"phone_number": PHONE})
    added = await sms.add(
        user(site, user_id), {"phone_number": PHONE, "verification_code": last_sms(site)[1]}
    )
    await require_mfa(site, tenant.org_id)
    form = {"recovery_code": str(added["recovery_code"])}
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/sms", token, data=form))[0] == 200
    assert (await tenant.api.call("GET", f"/v2/users/{user_id}", token))[0] == 401


async def test_mfa_session_plus_recovery_code_sets_up_sms(site: Site, tenant: Tenant) -> None:
    """Lost authenticator: the SOFTWARE_TOKEN_MFA session and the recovery code set up SMS."""
    user_id = await tenant.add_user("ivo")
    secret = (await site.services.mfa.secret_code(user(site, user_id)))["secret_code"]
    recovery = await site.services.mfa.add_software(user(site, user_id), totp(secret), False)
    _, body = await login(tenant, "ivo")
    session = str(body["session"])
    assert (await put_sms(tenant, session, phone_number=PHONE))[0] == 401
    assert (await put_sms(tenant, session, phone_number=PHONE, recovery_code="nope"))[0] == 401
    before = sms_count(site)
    status, _ = await put_sms(tenant, session, phone_number=PHONE, recovery_code=recovery)
    assert status == 200 and sms_count(site) == before + 1
    status, added = await put_sms(
        tenant,
        session,
        phone_number=PHONE,
        verification_code=last_sms(site)[1],
        recovery_code=recovery,
    )
    assert status == 200 and added["session"]
    status, _ = await tenant.api.call(
        "POST", "/v2/auth/challenge", str(added["session"]), data={"challenge": "MFA_SETUP"}
    )
    assert status == 201


@pytest.mark.parametrize("method", ["POST", "PUT"])
async def test_sms_verification_endpoints_are_gone(tenant: Tenant, method: str) -> None:
    _, token = await signed_in(tenant, "jay")
    assert (await tenant.api.call(method, "/v2/account/sms/verification", token))[0] == 404
