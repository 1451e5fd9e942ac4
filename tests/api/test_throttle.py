"""Brute-force protection: back-off then lockout per (account, address) pair, an account-wide
lockout only at a distributed rate (recorded), per address across accounts too; keyed on
the resolved account; X-Forwarded-For only from trusted proxies; admins lift blocks; every
block is a warning in the log."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest

from edge.app import Site
from edge.auth import throttle
from edge.auth.throttle import Policy
from edge.kernel import clock
from storage import throttle as store
from tests.sign_in import answer, enroll_software, login, totp, wrong
from tests.tenants import PASSWORD, Tenant

BAD = "wrong-password-1"


# A server that believes X-Forwarded-For from loopback (its proxy).
PROXIED = pytest.mark.world(trusted_proxies="127.0.0.0/8")


async def raw(
    tenant: Tenant, name: str, password: str, via: str | None = None
) -> tuple[int, dict[str, str], Any]:
    headers = {"X-Forwarded-For": via} if via else {}
    response = await tenant.api.client.post(
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": name,
            "password": password,
            "client_id": tenant.alias,
        },
        headers=headers,
    )
    return response.status, dict(response.headers), await response.json()


async def fail(tenant: Tenant, name: str, times: int, via: str | None = None) -> None:
    """Wrong passwords, each once the back-off of the one before has passed."""
    for _ in range(times):
        assert (await raw(tenant, name, BAD, via))[0] == 400
        clock.advance(timedelta(seconds=20))


def test_policy_backs_off_exponentially_then_locks() -> None:
    policy = Policy(free=5, lockout_after=10, lockout=timedelta(minutes=15))
    waits = [policy.wait(n).total_seconds() for n in range(1, 12)]
    assert waits == [0, 0, 0, 0, 1, 2, 4, 8, 16, 900, 900]


@pytest.mark.parametrize("name", ["kim", "nobody-here"])
async def test_pair_back_off_then_lockout(tenant: Tenant, name: str) -> None:
    """An existing and a missing account are throttled alike, so 429s reveal nothing."""
    if name == "kim":
        await tenant.add_user(name)
    for _ in range(5):
        assert (await raw(tenant, name, BAD))[0] == 400
    status, headers, body = await raw(tenant, name, BAD)
    assert status == 429 and headers["Retry-After"] == "1"
    assert body == {"message": throttle.MESSAGE}
    for expected in (2, 4, 8, 16):
        clock.advance(timedelta(seconds=expected // 2))
        assert (await raw(tenant, name, BAD))[0] == 400
        assert (await raw(tenant, name, BAD))[1].get("Retry-After") == str(expected)
    clock.advance(timedelta(seconds=16))
    assert (await raw(tenant, name, BAD))[0] == 400  # the tenth failure locks the pair
    status, headers, _ = await raw(tenant, name, PASSWORD)
    assert status == 429 and headers["Retry-After"] == "900"  # even the right password waits
    clock.advance(timedelta(minutes=15))
    if name == "kim":
        assert (await login(tenant, name))[0] == 201


async def test_success_resets_the_pair_count(tenant: Tenant) -> None:
    await tenant.add_user("lee")
    for _ in range(2):
        await fail(tenant, "lee", 4)
        assert (await login(tenant, "lee"))[0] == 201


@PROXIED
async def test_the_owner_elsewhere_is_not_locked_out(tenant: Tenant) -> None:
    """Guesses from one address lock that address out of the account, not its owner."""
    await tenant.add_user("ada")
    await fail(tenant, "ada", 10, via="198.51.100.7")
    assert (await raw(tenant, "ada", PASSWORD, via="198.51.100.7"))[0] == 429
    assert (await raw(tenant, "ada", PASSWORD, via="203.0.113.9"))[0] == 201


async def test_forwarded_for_is_ignored_unless_from_a_trusted_proxy(tenant: Tenant) -> None:
    await tenant.add_user("bob")
    await fail(tenant, "bob", 10, via="198.51.100.7")
    assert (await raw(tenant, "bob", PASSWORD, via="203.0.113.9"))[0] == 429


@PROXIED
async def test_only_the_right_most_untrusted_hop_counts(tenant: Tenant) -> None:
    """A client behind the proxy cannot pick its address by writing the header itself."""
    await tenant.add_user("cy")
    for forged in range(10):
        status, _, _ = await raw(tenant, "cy", BAD, via=f"10.9.9.{forged}, 198.51.100.7")
        assert status == 400
        clock.advance(timedelta(seconds=20))
    assert (await raw(tenant, "cy", PASSWORD, via="10.0.0.1, 198.51.100.7"))[0] == 429


async def test_every_spelling_of_a_phone_number_counts_against_one_account(
    tenant: Tenant,
) -> None:
    await tenant.add_user("pia", phone_number="+15550102000", phone_folded="+15550102000")
    spellings = ["+1 555 010 2000", "+1 (555) 010-2000", "+1.555.010.2000", "0015550102000"]
    spellings += ["+15550102000", "+1/555/010/2000", "pia", "PIA@clinic.test", " Pia ", "PIA"]
    for number in spellings:
        assert (await raw(tenant, number, BAD))[0] == 400
        clock.advance(timedelta(seconds=20))
    assert (await raw(tenant, "+1-555-010-2000", PASSWORD))[0] == 429


@PROXIED
async def test_a_distributed_guess_locks_the_account_and_is_recorded(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(
        throttle, "ACCOUNT_WIDE", Policy(free=6, lockout_after=6, lockout=timedelta(minutes=15))
    )
    user_id = await tenant.add_user("dee")
    with caplog.at_level(logging.WARNING, logger="edge.signin"):
        for address in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
            await fail(tenant, "dee", 2, via=address)
    assert (await raw(tenant, "dee", PASSWORD, via="203.0.113.50"))[0] == 429
    records = tenant.site.services.db.read(lambda c: store.lockouts_since(c, "0"))
    assert [(r["account"], r["failures"], r["addresses"]) for r in records] == [
        (f"user:{user_id}", 6, 3)
    ]
    assert any(
        "account-wide" in r.getMessage() and "3 addresses" in r.getMessage() for r in caplog.records
    )
    clock.advance(timedelta(minutes=15))
    assert (await raw(tenant, "dee", PASSWORD, via="203.0.113.50"))[0] == 201


async def test_blocks_are_warnings_on_one_line(
    tenant: Tenant, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="edge.signin"):
        for _ in range(5):
            assert (await raw(tenant, "evil\nFORGED", BAD))[0] == 400
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "backing off" in warnings[0].getMessage()
    assert "\n" not in warnings[0].getMessage() and "evil\\x0aforged" in warnings[0].getMessage()


async def test_an_admin_lifts_a_block(tenant: Tenant) -> None:
    user_id = await tenant.add_user("eve")
    await tenant.add_user("pat")
    await fail(tenant, "eve", 10)
    assert (await raw(tenant, "eve", PASSWORD))[0] == 429
    path = f"/v2/users/{user_id}/sign-in-blocks"
    pat_token = await tenant.token("pat@clinic.test")
    assert (await tenant.api.call("DELETE", path, pat_token))[0] in (403, 404)
    status, body = await tenant.api.call("DELETE", path, await tenant.token())
    assert status == 200 and body["message"].startswith("Cleared")
    assert (await raw(tenant, "eve", PASSWORD))[0] == 201


async def test_per_address_limit_across_accounts(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        throttle, "ADDRESS", Policy(free=3, lockout_after=4, lockout=timedelta(minutes=10))
    )
    await tenant.add_user("max")
    for name in ("a1", "a2", "a3"):
        assert (await raw(tenant, name, BAD))[0] == 400
    clock.freeze()  # a back-off of a second
    status, headers, _ = await raw(tenant, "max", PASSWORD)
    assert status == 429 and headers["Retry-After"] == "1"
    clock.advance(timedelta(seconds=1))
    assert (await raw(tenant, "a4", BAD))[0] == 400  # the fourth failure locks the address
    assert (await raw(tenant, "max", PASSWORD))[1]["Retry-After"] == "600"
    clock.advance(timedelta(minutes=10))
    assert (await login(tenant, "max"))[0] == 201


async def test_wrong_mfa_codes_count_against_the_account(site: Site, tenant: Tenant) -> None:
    """Each wrong code restarts sign-in with the right password, which must not clear them."""
    secret = await enroll_software(site, await tenant.add_user("ned"))
    for _ in range(5):
        _, body = await login(tenant, "ned")
        form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": wrong(totp(secret))}
        assert (await answer(tenant.api, body["session"], **form))[0] == 401
    clock.freeze()  # the back-off after the fifth lasts a second: a loaded machine is slower
    _, body = await login(tenant, "ned")
    form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": totp(secret)}
    assert (await answer(tenant.api, body["session"], **form))[0] == 429
    clock.advance(timedelta(seconds=1))
    assert (await answer(tenant.api, body["session"], **form))[0] == 201


async def test_idle_counts_are_purged_but_lockouts_kept(site: Site) -> None:
    signin = site.services.signin
    for name in ("old", "locked"):
        for _ in range(10 if name == "locked" else 1):
            await signin.throttle.failed(name, "192.0.2.1")
    clock.advance(timedelta(minutes=10))
    far = clock.iso(clock.now() + timedelta(days=365))
    await site.services.db.write(
        lambda c: store.record(c, "pair:locked@192.0.2.1", 10, far, clock.now_iso())
    )
    clock.advance(timedelta(days=1))
    await site.services.db.write(lambda c: store.purge_before(c, clock.now_iso()))
    assert site.services.db.read(lambda c: store.get(c, "pair:old@192.0.2.1")) is None
    assert site.services.db.read(lambda c: store.get(c, "pair:locked@192.0.2.1")) is not None
