"""A TOTP code works once: the same code again (or an older one) is refused for that
account, also within its 30-second window, and the code that confirmed the set-up cannot
then sign in."""

from __future__ import annotations

from datetime import timedelta

import pyotp

from edge.app import Site
from edge.auth.signin import WRONG_CODE
from edge.kernel import clock
from tests.sign_in import answer, enroll_software, login, totp
from tests.tenants import Tenant

STEP = {"challenge": "SOFTWARE_TOKEN_MFA"}


async def with_code(tenant: Tenant, name: str, code: str) -> tuple[int, dict[str, str]]:
    _, body = await login(tenant, name)
    return await answer(tenant.api, body["session"], **STEP, mfa_code=code)


async def test_a_code_signs_in_once(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("ida"))
    code = totp(secret)
    assert (await with_code(tenant, "ida", code))[0] == 201
    assert await with_code(tenant, "ida", code) == (401, {"message": WRONG_CODE})
    clock.advance(timedelta(seconds=30))
    assert (await with_code(tenant, "ida", totp(secret)))[0] == 201


async def test_an_older_code_is_refused_after_a_newer_one(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("ivo"))
    older = totp(secret)
    clock.advance(timedelta(seconds=30))
    assert (await with_code(tenant, "ivo", totp(secret)))[0] == 201
    assert (await with_code(tenant, "ivo", older))[0] == 401  # still within the window


async def test_a_code_sent_with_the_password_is_used_up_too(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("isa"))
    form = {
        "grant_type": "password",
        "username": "isa",
        "password": "tenant-password-1",
        "client_id": tenant.alias,
        "mfa_code": totp(secret),
    }
    assert (await tenant.api.call("POST", "/v2/auth/token", data=form))[0] == 201
    assert (await tenant.api.call("POST", "/v2/auth/token", data=form))[0] == 401


async def test_the_set_up_code_cannot_sign_in(site: Site, tenant: Tenant) -> None:
    await tenant.add_user("ian")
    token = await tenant.token("ian@clinic.test")
    _, reply = await tenant.api.call("GET", "/v2/auth/mfa/secret-code", token)
    code = pyotp.TOTP(reply["secret_code"]).at(clock.now())
    status, _ = await tenant.api.call(
        "PUT", "/v2/auth/mfa/software", token, data={"mfa_code": code}
    )
    assert status == 200
    assert (await with_code(tenant, "ian", code))[0] == 401
