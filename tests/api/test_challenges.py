"""The sign-in state machine: every challenge kind end to end, single use, expiry, and the
401 after a wrong MFA code."""

from __future__ import annotations

from datetime import timedelta

import jwt
import pytest

from edge.app import Site
from edge.kernel import clock
from tests.conftest import Api
from tests.sign_in import (
    answer,
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
from tests.tenants import PASSWORD, Tenant
from tests.world import World

RESTART = "Session is invalid or has expired: restart sign-in"


async def expect_challenge(tenant: Tenant, name: str, kind: str) -> str:
    status, body = await login(tenant, name)
    assert status == 200, body
    assert body["challenge"] == kind and body["message"]
    return str(body["session"])


async def test_no_step_left_gives_tokens_at_once(tenant: Tenant) -> None:
    await tenant.add_user("plain")
    status, body = await login(tenant, "plain")
    assert status == 201 and body["token_type"] == "Bearer"


async def test_new_password_required_then_tokens(site: Site, tenant: Tenant) -> None:
    user_id = await tenant.add_user("newbie", has_temporary_password=1, new_password_required=1)
    session = await expect_challenge(tenant, "newbie", "NEW_PASSWORD_REQUIRED")
    status, body = await answer(tenant.api, session, challenge="NEW_PASSWORD_REQUIRED")
    assert status == 400 and body["message"].startswith("new_password:")
    status, body = await answer(
        tenant.api, session, challenge="NEW_PASSWORD_REQUIRED", new_password="brand-new-pass"
    )
    assert status == 201, body
    row = user(site, user_id)
    assert not row["has_temporary_password"] and not row["new_password_required"]
    assert (await login(tenant, "newbie", "brand-new-pass"))[0] == 201
    assert (await login(tenant, "newbie"))[0] == 400  # the temporary password is gone


async def test_software_token_mfa(site: Site, tenant: Tenant) -> None:
    user_id = await tenant.add_user("totp")
    secret = await enroll_software(site, user_id)
    session = await expect_challenge(tenant, "totp", "SOFTWARE_TOKEN_MFA")
    status, body = await answer(
        tenant.api, session, challenge="SOFTWARE_TOKEN_MFA", mfa_code=totp(secret)
    )
    assert status == 201 and body["access_token"]
    status, _ = await tenant.api.call("GET", "/v2/users/" + user_id, body["access_token"])
    assert status == 200


async def test_an_answer_after_the_org_is_suspended_opens_no_session(
    site: Site, tenant: Tenant, staff_token: str
) -> None:
    """The password was right while the org was active; the org is suspended before the
    second factor comes in, so no session opens (sessions of a suspended org end at once)."""
    secret = await enroll_software(site, await tenant.add_user("late"))
    session = await expect_challenge(tenant, "late", "SOFTWARE_TOKEN_MFA")
    path = f"/v2/orgs/{tenant.org_id}"
    assert (await tenant.api.call("PATCH", path, staff_token, json={"is_active": False}))[0] == 200
    form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    assert await answer(tenant.api, session, **form) == (
        403,
        {"message": "This organization is suspended"},
    )


async def test_session_is_single_use(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("once"))
    session = await expect_challenge(tenant, "once", "SOFTWARE_TOKEN_MFA")
    form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    assert (await answer(tenant.api, session, **form))[0] == 201
    assert await answer(tenant.api, session, **form) == (401, {"message": RESTART})


@pytest.mark.parametrize("code", ["", "12", "12345", "abcdef"])
async def test_empty_or_short_software_code_is_400_and_keeps_the_session(
    site: Site, tenant: Tenant, code: str
) -> None:
    secret = await enroll_software(site, await tenant.add_user("short"))
    session = await expect_challenge(tenant, "short", "SOFTWARE_TOKEN_MFA")
    status, body = await answer(tenant.api, session, challenge="SOFTWARE_TOKEN_MFA", mfa_code=code)
    assert status == 400 and body["message"].startswith("mfa_code:")
    form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    assert (await answer(tenant.api, session, **form))[0] == 201


async def test_wrong_code_invalidates_the_session(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("oops"))
    session = await expect_challenge(tenant, "oops", "SOFTWARE_TOKEN_MFA")
    bad = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": wrong(totp(secret))}
    status, body = await answer(tenant.api, session, **bad)
    assert status == 401 and "restart sign-in" in body["message"]
    good = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    assert await answer(tenant.api, session, **good) == (401, {"message": RESTART})


async def test_sms_mfa_sends_a_code_at_sign_in(site: Site, tenant: Tenant) -> None:
    await enroll_sms(site, await tenant.add_user("texter"), "+15550102000")
    before = sms_count(site)
    session = await expect_challenge(tenant, "texter", "SMS_MFA")
    assert sms_count(site) == before + 1
    phone, code = last_sms(site)
    assert phone == "+15550102000"
    status, body = await answer(tenant.api, session, challenge="SMS_MFA", mfa_code=wrong(code))
    assert status == 401
    session = await expect_challenge(tenant, "texter", "SMS_MFA")
    status, body = await answer(
        tenant.api, session, challenge="SMS_MFA", mfa_code=last_sms(site)[1]
    )
    assert status == 201, body


@pytest.mark.parametrize(
    ("choice", "next_kind"), [("software", "SOFTWARE_TOKEN_MFA"), ("sms", "SMS_MFA")]
)
async def test_select_mfa_type_without_preference(
    site: Site, tenant: Tenant, choice: str, next_kind: str
) -> None:
    user_id = await tenant.add_user("both")
    secret = await enroll_software(site, user_id)
    await enroll_sms(site, user_id)
    await tenant.site.services.db.write(
        lambda c: c.execute("UPDATE users SET preferred_mfa = NULL WHERE id = ?", (user_id,))
    )
    session = await expect_challenge(tenant, "both", "SELECT_MFA_TYPE")
    status, body = await answer(tenant.api, session, challenge="SELECT_MFA_TYPE", mfa_choice="x")
    assert status == 400
    status, body = await answer(tenant.api, session, challenge="SELECT_MFA_TYPE", mfa_choice=choice)
    assert status == 200 and body["challenge"] == next_kind
    code = totp(secret) if choice == "software" else last_sms(site)[1]
    status, body = await answer(tenant.api, body["session"], challenge=next_kind, mfa_code=code)
    assert status == 201, body


async def test_preferred_mfa_picks_the_challenge(site: Site, tenant: Tenant) -> None:
    user_id = await tenant.add_user("pref")
    await enroll_software(site, user_id)  # preferred: SOFTWARE (first factor)
    await enroll_sms(site, user_id)
    first = await expect_challenge(tenant, "pref", "SOFTWARE_TOKEN_MFA")
    await site.services.mfa.set_preferred(user(site, user_id), "sms")
    second = await expect_challenge(tenant, "pref", "SMS_MFA")
    assert first and second and first != second  # two sign-ins, each its own session


async def test_mfa_setup_with_software_then_tokens(site: Site, tenant: Tenant) -> None:
    await require_mfa(site, tenant.org_id)
    user_id = await tenant.add_user("setup")
    session = await expect_challenge(tenant, "setup", "MFA_SETUP")
    status, body = await answer(tenant.api, session, challenge="MFA_SETUP")
    assert status == 400  # nothing set up yet; the session stays usable
    status, secret = await tenant.api.call("GET", "/v2/auth/mfa/secret-code", session)
    assert status == 200 and secret["secret_code"]
    status, added = await tenant.api.call(
        "PUT", "/v2/auth/mfa/software", session, data={"mfa_code": totp(secret["secret_code"])}
    )
    assert status == 200 and added["recovery_code"] and added["session"]
    assert user(site, user_id)["software_mfa_enabled"]
    assert (await answer(tenant.api, session, challenge="MFA_SETUP"))[0] == 401  # spent
    status, body = await answer(tenant.api, added["session"], challenge="MFA_SETUP")
    assert status == 201, body
    await expect_challenge(tenant, "setup", "SOFTWARE_TOKEN_MFA")


async def test_mfa_setup_with_sms_then_tokens(site: Site, tenant: Tenant) -> None:
    await require_mfa(site, tenant.org_id)
    await tenant.add_user("smssetup")
    session = await expect_challenge(tenant, "smssetup", "MFA_SETUP")
    form = {"phone_number": "+15550104000"}
    status, body = await tenant.api.call("PUT", "/v2/auth/mfa/sms", session, data=form)
    assert status == 200 and body["pending_phone_number"] == "+15550104000"
    form["verification_code"] = last_sms(site)[1]
    status, body = await tenant.api.call("PUT", "/v2/auth/mfa/sms", session, data=form)
    assert status == 200 and body["recovery_code"] and body["session"]
    assert (await answer(tenant.api, body["session"], challenge="MFA_SETUP"))[0] == 201


async def test_challenge_sessions_expire(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("slow"))
    session = await expect_challenge(tenant, "slow", "SOFTWARE_TOKEN_MFA")
    clock.advance(timedelta(minutes=5, seconds=1))  # session_expire_mins defaults to 5
    form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    assert await answer(tenant.api, session, **form) == (401, {"message": RESTART})


async def test_a_session_answers_only_its_own_challenge(site: Site, tenant: Tenant) -> None:
    await enroll_software(site, await tenant.add_user("kind"))
    session = await expect_challenge(tenant, "kind", "SOFTWARE_TOKEN_MFA")
    status, body = await answer(tenant.api, session, challenge="SMS_MFA", mfa_code="123456")
    assert status == 400 and body["message"].startswith("challenge:")


@pytest.mark.parametrize("session", [None, "not-a-session", "a.b.c"])
async def test_bad_sessions_are_401(tenant: Tenant, session: str | None) -> None:
    status, body = await tenant.api.call(
        "POST", "/v2/auth/challenge", session, data={"challenge": "SMS_MFA", "mfa_code": "1"}
    )
    assert (status, body) == (401, {"message": RESTART})


async def test_challenge_session_is_not_an_access_token(site: Site, tenant: Tenant) -> None:
    await enroll_software(site, await tenant.add_user("notatoken"))
    session = await expect_challenge(tenant, "notatoken", "SOFTWARE_TOKEN_MFA")
    assert (await tenant.api.call("GET", "/v2/users", session))[0] == 401
    assert (await tenant.api.call("GET", "/v2/auth/mfa/secret-code", session))[0] == 401


async def test_refresh_refused_under_policy_until_mfa_is_set_up(site: Site, tenant: Tenant) -> None:
    await tenant.add_user("late")
    status, tokens = await login(tenant, "late")
    assert status == 201
    await require_mfa(site, tenant.org_id)
    form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    status, body = await tenant.api.call("POST", "/v2/auth/token", data=form)
    assert status == 400 and "requires MFA" in body["message"]
    await require_mfa(site, tenant.org_id, False)
    assert (await tenant.api.call("POST", "/v2/auth/token", data=form))[0] == 201


async def test_software_code_with_the_password_signs_in_at_once(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("onestep"))
    form = {"grant_type": "password", "username": "onestep", "client_id": tenant.alias}
    form["password"] = "tenant-password-1"
    status, body = await tenant.api.call(
        "POST", "/v2/auth/token", data={**form, "mfa_code": wrong(totp(secret))}
    )
    assert status == 401 and "restart sign-in" in body["message"]
    status, body = await tenant.api.call(
        "POST", "/v2/auth/token", data={**form, "mfa_code": totp(secret)}
    )
    assert status == 201 and body["access_token"]


async def test_project_scope_survives_the_challenge(site: Site, api: Api, world: World) -> None:
    secret = await enroll_software(site, world.id("project_admin"))
    form = {"grant_type": "password", "username": "project_admin", "password": PASSWORD}
    status, body = await api.call(
        "POST", "/v2/auth/token", data={**form, "client_id": world.project_id}
    )
    assert status == 200 and body["challenge"] == "SOFTWARE_TOKEN_MFA", body
    code = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    status, tokens = await answer(api, body["session"], **code)
    assert status == 201
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["prj"] == world.project_id
