"""Software MFA: TOTP secrets (encrypted at rest), codes from pyotp, recovery codes, removal
under an MFA policy, and the preference."""

from __future__ import annotations

import stat

import pytest

from edge.app import Site
from edge.auth.keys import MFA_FILE
from storage import layout
from storage import mfa as mfa_store
from tests.conftest import Api
from tests.sign_in import (
    answer,
    enroll_sms,
    enroll_software,
    login,
    require_mfa,
    totp,
    user,
    wrong,
)
from tests.tenants import Tenant


async def signed_in(tenant: Tenant, name: str) -> tuple[str, str]:
    user_id = await tenant.add_user(name)
    return user_id, await tenant.token(f"{name}@clinic.test")


async def test_set_up_with_a_pyotp_code(site: Site, tenant: Tenant) -> None:
    user_id, token = await signed_in(tenant, "ana")
    status, secret = await tenant.api.call("GET", "/v2/auth/mfa/secret-code", token)
    assert status == 200 and len(secret["secret_code"]) >= 16
    assert secret["uri"].startswith("otpauth://totp/")
    status, body = await tenant.api.call(
        "PUT", "/v2/auth/mfa/software", token, data={"mfa_code": wrong(totp(secret["secret_code"]))}
    )
    assert (status, body) == (400, {"message": "mfa_code: Invalid Code"})
    status, body = await tenant.api.call(
        "PUT", "/v2/auth/mfa/software", token, data={"mfa_code": totp(secret["secret_code"])}
    )
    assert status == 200 and body["recovery_code"] and "session" not in body
    row = user(site, user_id)
    assert row["software_mfa_enabled"] and row["preferred_mfa"] == "SOFTWARE"


@pytest.mark.parametrize("code", [None, "", "123"])
async def test_empty_or_short_code_is_400(tenant: Tenant, code: str | None) -> None:
    _, token = await signed_in(tenant, "bo")
    await tenant.api.call("GET", "/v2/auth/mfa/secret-code", token)
    form = {} if code is None else {"mfa_code": code}
    status, body = await tenant.api.call("PUT", "/v2/auth/mfa/software", token, data=form)
    assert status == 400 and body["message"].startswith("mfa_code:")


async def test_secret_encrypted_and_recovery_code_hashed_at_rest(
    site: Site, tenant: Tenant
) -> None:
    user_id = await tenant.add_user("cy")
    secret = await enroll_software(site, user_id)
    row = site.services.db.read(lambda c: mfa_store.get(c, user_id, "software"))
    assert row is not None and secret not in str(row) and row["secret_enc"]
    assert len(row["recovery_hash"]) == 64
    key = layout.keys_dir(site.services.config.data_dir) / MFA_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


async def test_remove_without_policy(site: Site, tenant: Tenant) -> None:
    user_id, token = await signed_in(tenant, "di")
    await enroll_software(site, user_id)
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/software", token))[0] == 200
    row = user(site, user_id)
    assert not row["software_mfa_enabled"] and row["preferred_mfa"] is None
    assert (await tenant.api.call("GET", "/v2/users/" + user_id, token))[0] == 200


async def test_policy_refuses_removal_of_the_last_factor(site: Site, tenant: Tenant) -> None:
    user_id, token = await signed_in(tenant, "ed")
    await enroll_software(site, user_id)
    await require_mfa(site, tenant.org_id)
    status, body = await tenant.api.call("DELETE", "/v2/auth/mfa/software", token)
    assert status == 403 and "requires MFA" in body["message"]
    assert user(site, user_id)["software_mfa_enabled"]


async def test_policy_allows_removal_when_sms_remains(site: Site, tenant: Tenant) -> None:
    user_id, token = await signed_in(tenant, "fay")
    await enroll_software(site, user_id)
    await enroll_sms(site, user_id)
    await require_mfa(site, tenant.org_id)
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/software", token))[0] == 200
    assert user(site, user_id)["preferred_mfa"] == "SMS"
    assert (await tenant.api.call("GET", "/v2/users/" + user_id, token))[0] == 200  # not revoked


async def test_recovery_code_removes_a_lost_device_and_revokes_tokens(
    site: Site, tenant: Tenant
) -> None:
    user_id, token = await signed_in(tenant, "gil")
    secret = (await site.services.mfa.secret_code(user(site, user_id)))["secret_code"]
    recovery = await site.services.mfa.add_software(user(site, user_id), totp(secret), False)
    await require_mfa(site, tenant.org_id)
    form = {"recovery_code": "0000-0000-0000-0000"}
    status, body = await tenant.api.call("DELETE", "/v2/auth/mfa/software", token, data=form)
    assert (status, body) == (400, {"message": "recovery_code: Invalid Code"})
    form = {"recovery_code": recovery}
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/software", token, data=form))[0] == 200
    assert not user(site, user_id)["software_mfa_enabled"]
    assert (await tenant.api.call("GET", "/v2/users/" + user_id, token))[0] == 401


async def test_lost_device_during_sign_in(site: Site, tenant: Tenant) -> None:
    """A challenge session plus the recovery code removes the factor; sign-in restarts into
    MFA_SETUP under the policy."""
    user_id = await tenant.add_user("hal")
    secret = (await site.services.mfa.secret_code(user(site, user_id)))["secret_code"]
    recovery = await site.services.mfa.add_software(user(site, user_id), totp(secret), False)
    await require_mfa(site, tenant.org_id)
    status, body = await login(tenant, "hal")
    session = body["session"]
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/software", session))[0] == 401
    form = {"recovery_code": recovery}
    assert (await tenant.api.call("DELETE", "/v2/auth/mfa/software", session, data=form))[0] == 200
    status, body = await login(tenant, "hal")
    assert status == 200 and body["challenge"] == "MFA_SETUP"


async def test_preferred_mfa_setting(site: Site, tenant: Tenant) -> None:
    user_id, token = await signed_in(tenant, "ivy")
    await enroll_software(site, user_id)
    status, body = await tenant.api.call(
        "PATCH", "/v2/auth/mfa/settings", token, data={"preferred_mfa": "sms"}
    )
    assert status == 400 and body["message"] == "preferred_mfa: SMS MFA is not set up"
    await enroll_sms(site, user_id)
    for value, stored in (("sms", "SMS"), ("SOFTWARE", "SOFTWARE")):
        data = {"preferred_mfa": value}
        assert (await tenant.api.call("PATCH", "/v2/auth/mfa/settings", token, data=data))[0] == 200
        assert user(site, user_id)["preferred_mfa"] == stored
    status, _ = await tenant.api.call(
        "PATCH", "/v2/auth/mfa/settings", token, data={"preferred_mfa": "pigeon"}
    )
    assert status == 400


SPELLINGS = [
    ("SOFTWARE", "SOFTWARE"),
    ("software", "SOFTWARE"),
    ("SOFTWARE_TOKEN_MFA", "SOFTWARE"),
    ("software_token_mfa", "SOFTWARE"),
    ("Software-Token", "SOFTWARE"),
    ("software_mfa", "SOFTWARE"),
    ("TOTP", "SOFTWARE"),
    ("SMS", "SMS"),
    ("sms", "SMS"),
    ("SMS_MFA", "SMS"),
    (" sms_mfa ", "SMS"),
]


@pytest.mark.parametrize(("value", "stored"), SPELLINGS)
async def test_preferred_mfa_spellings_answer_one_form(
    site: Site, tenant: Tenant, value: str, stored: str
) -> None:
    user_id, token = await signed_in(tenant, "ivo")
    await enroll_software(site, user_id)
    await enroll_sms(site, user_id)
    other = "SMS" if stored == "SOFTWARE" else "SOFTWARE"
    data = {"preferred_mfa": other}
    assert (await tenant.api.call("PATCH", "/v2/auth/mfa/settings", token, data=data))[0] == 200
    data = {"preferred_mfa": value}
    assert (await tenant.api.call("PATCH", "/v2/auth/mfa/settings", token, data=data))[0] == 200
    status, body = await tenant.api.call("GET", f"/v2/users/{user_id}", token)
    assert status == 200 and body["user"]["preferred_mfa"] == stored


@pytest.mark.parametrize("value", ["", "SELECT_MFA_TYPE", "MFA_SETUP", "sms mfa token", "email"])
async def test_preferred_mfa_refuses_other_values(site: Site, tenant: Tenant, value: str) -> None:
    user_id, token = await signed_in(tenant, "ivo")
    await enroll_software(site, user_id)
    data = {"preferred_mfa": value}
    status, body = await tenant.api.call("PATCH", "/v2/auth/mfa/settings", token, data=data)
    assert status == 400 and body["message"].startswith("preferred_mfa: must be")
    assert user(site, user_id)["preferred_mfa"] == "SOFTWARE"


async def test_staff_have_no_mfa(api: Api, staff_token: str) -> None:
    assert (await api.call("GET", "/v2/auth/mfa/secret-code", staff_token))[0] == 403


async def test_mfa_routes_need_a_caller(api: Api) -> None:
    assert (await api.call("GET", "/v2/auth/mfa/secret-code"))[0] == 401
    assert (await api.call("PUT", "/v2/auth/mfa/sms", data={"phone_number": "+15550100000"}))[
        0
    ] == 401


async def test_software_code_used_at_sign_in_after_setup(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("jo"))
    status, body = await login(tenant, "jo")
    form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    assert (await answer(tenant.api, body["session"], **form))[0] == 201
