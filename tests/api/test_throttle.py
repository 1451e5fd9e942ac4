"""Brute-force protection: back-off then lockout per account, per client address too,
reset on success, Retry-After, and the same answers for accounts that do not exist."""

from __future__ import annotations

from datetime import timedelta

import pytest

from edge import clock
from edge.app import Site
from edge.auth import throttle
from edge.auth.throttle import Policy
from storage import throttle as store
from tests.api.sign_in_world import answer, enroll_software, login, totp, wrong
from tests.conftest import Api
from tests.tenants import Tenant, new_tenant

BAD = "wrong-password-1"


@pytest.fixture
async def tenant(site: Site, api: Api) -> Tenant:
    return await new_tenant(site, api)


async def raw(tenant: Tenant, name: str, password: str) -> tuple[int, dict[str, str], object]:
    response = await tenant.api.client.post(
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": name,
            "password": password,
            "client_id": tenant.alias,
        },
    )
    return response.status, dict(response.headers), await response.json()


def test_policy_backs_off_exponentially_then_locks() -> None:
    policy = Policy(free=5, lockout_after=10, lockout=timedelta(minutes=15))
    waits = [policy.wait(n).total_seconds() for n in range(1, 12)]
    assert waits == [0, 0, 0, 0, 1, 2, 4, 8, 16, 900, 900]


@pytest.mark.parametrize("name", ["kim", "nobody-here"])
async def test_account_back_off_then_lockout(tenant: Tenant, name: str) -> None:
    """An existing and a missing account are throttled alike, so 429s reveal nothing."""
    if name == "kim":
        await tenant.add_user(name)
    for _ in range(5):
        assert (await login(tenant, name, BAD))[0] == 400
    status, headers, body = await raw(tenant, name, BAD)
    assert status == 429 and headers["Retry-After"] == "1"
    assert body == {"message": throttle.MESSAGE}
    for expected in (2, 4, 8, 16):
        clock.advance(timedelta(seconds=expected // 2))
        assert (await login(tenant, name, BAD))[0] == 400
        assert (await raw(tenant, name, BAD))[1].get("Retry-After") == str(expected)
    clock.advance(timedelta(seconds=16))
    assert (await login(tenant, name, BAD))[0] == 400  # the tenth failure locks
    status, headers, _ = await raw(tenant, name, "tenant-password-1")
    assert status == 429 and headers["Retry-After"] == "900"  # even the right password waits
    clock.advance(timedelta(minutes=15))
    if name == "kim":
        assert (await login(tenant, name))[0] == 201


async def test_success_resets_the_account_count(tenant: Tenant) -> None:
    await tenant.add_user("lee")
    for _ in range(4):
        assert (await login(tenant, "lee", BAD))[0] == 400
    assert (await login(tenant, "lee"))[0] == 201
    for _ in range(4):
        assert (await login(tenant, "lee", BAD))[0] == 400
    assert (await login(tenant, "lee"))[0] == 201


async def test_per_address_limit_across_accounts(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        throttle, "ADDRESS", Policy(free=3, lockout_after=4, lockout=timedelta(minutes=10))
    )
    await tenant.add_user("max")
    for name in ("a1", "a2", "a3"):
        assert (await login(tenant, name, BAD))[0] == 400
    status, headers, _ = await raw(tenant, "max", "tenant-password-1")
    assert status == 429 and headers["Retry-After"] == "1"
    clock.advance(timedelta(seconds=1))
    assert (await login(tenant, "a4", BAD))[0] == 400  # the fourth failure locks the address
    assert (await raw(tenant, "max", "tenant-password-1"))[1]["Retry-After"] == "600"
    clock.advance(timedelta(minutes=10))
    assert (await login(tenant, "max"))[0] == 201


async def test_wrong_mfa_codes_count_against_the_account(site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("ned"))
    for _ in range(5):
        _, body = await login(tenant, "ned")
        form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": wrong(totp(secret))}
        assert (await answer(tenant.api, body["session"], **form))[0] == 401
    _, body = await login(tenant, "ned")
    form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    assert (await answer(tenant.api, body["session"], **form))[0] == 429
    clock.advance(timedelta(seconds=1))
    assert (await answer(tenant.api, body["session"], **form))[0] == 201


async def test_idle_counts_are_purged_but_lockouts_kept(site: Site, tenant: Tenant) -> None:
    for name in ("old", "locked"):
        for _ in range(10 if name == "locked" else 1):
            await site.services.signin.throttle.failed(name, None)
    clock.advance(timedelta(minutes=10))
    await site.services.db.write(lambda c: store.record(c, "acct:locked", 10, "9999", "0000"))
    clock.advance(timedelta(days=1))
    await site.services.db.write(lambda c: store.purge_before(c, clock.now_iso()))
    assert site.services.db.read(lambda c: store.get(c, "acct:old")) is None
    assert site.services.db.read(lambda c: store.get(c, "acct:locked")) is not None
