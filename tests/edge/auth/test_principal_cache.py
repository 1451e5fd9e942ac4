"""The verified-principal cache: hits, bounds, and every way an entry must stop working."""

from __future__ import annotations

from datetime import timedelta

import pytest

from edge.app import Site
from edge.auth.principal_cache import PrincipalCache
from edge.auth.tokens import Lifetimes, Tokens
from edge.kernel import clock
from edge.kernel.errors import Unauthenticated
from edge.kernel.principal import Principal
from storage import staff
from tests.tenants import Tenant


async def open_staff_session(site: Site, tokens: Tokens | None = None) -> tuple[str, str]:
    """An access token of a new staff session, and the session ID."""
    owner = site.services.db.read(staff.first)
    info = await (tokens or site.services.tokens).open_session(
        "staff", owner["id"], org_id=None, project_id=None, lifetimes=Lifetimes()
    )
    token = str(info["access_token"])
    return token, str(site.services.tokens.verify(token).session_id)


def cached(tokens: Tokens) -> PrincipalCache:
    assert tokens.cache is not None
    return tokens.cache


async def test_a_verified_token_is_cached_and_served_from_the_cache(site: Site) -> None:
    tokens = site.services.tokens
    token, session_id = await open_staff_session(site)
    assert len(cached(tokens)) == 1
    # The signing keys could not verify it any more: only the cache can answer.
    tokens._keys = None  # type: ignore[assignment]
    assert tokens.verify(token).session_id == session_id


async def test_sign_out_ends_a_cached_token(site: Site) -> None:
    token, session_id = await open_staff_session(site)
    await site.services.tokens.revoke_session(session_id)
    assert len(cached(site.services.tokens)) == 0
    with pytest.raises(Unauthenticated):
        site.services.tokens.verify(token)


async def test_revoking_an_account_ends_its_cached_tokens(site: Site) -> None:
    token, _ = await open_staff_session(site)
    account = site.services.tokens.verify(token).account_id
    await site.services.tokens.revoke_accounts([account])
    with pytest.raises(Unauthenticated):
        site.services.tokens.verify(token)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE sessions SET revoked = 1",
        "DELETE FROM sessions",
        "DELETE FROM staff",
    ],
)
async def test_a_revocation_written_straight_to_the_database_ends_a_cached_token(
    site: Site, sql: str
) -> None:
    """As another worker process, or an operator with the sqlite3 shell, would write it."""
    token, _ = await open_staff_session(site)
    site.services.tokens.verify(token)
    await site.services.db.write(lambda c: c.execute(sql))
    with pytest.raises(Unauthenticated):
        site.services.tokens.verify(token)


async def test_a_user_suspended_in_the_database_loses_a_cached_token(
    site: Site, tenant: Tenant
) -> None:
    info = await site.services.tokens.open_session(
        "user", tenant.admin_id, org_id=tenant.org_id, project_id=None, lifetimes=Lifetimes()
    )
    token = str(info["access_token"])
    site.services.tokens.verify(token)
    await site.services.db.write(
        lambda c: c.execute("UPDATE users SET is_active = 0 WHERE id = ?", (tenant.admin_id,))
    )
    with pytest.raises(Unauthenticated, match="not active"):
        site.services.tokens.verify(token)


async def test_expiry_is_checked_on_every_use_of_a_cached_token(site: Site) -> None:
    token, _ = await open_staff_session(site)
    clock.advance(timedelta(hours=1, seconds=1))
    with pytest.raises(Unauthenticated, match="expired"):
        site.services.tokens.verify(token)


async def test_without_the_cache_tokens_still_verify(site: Site) -> None:
    tokens = Tokens(site.services.db, site.services.keys, cache=False)
    token, session_id = await open_staff_session(site, tokens)
    assert tokens.cache is None
    assert tokens.verify(token).session_id == session_id
    await tokens.revoke_session(session_id)
    with pytest.raises(Unauthenticated):
        tokens.verify(token)


# -- the cache on its own ---------------------------------------------------------------
WHO = Principal("staff", "a1", "s1")


class Epoch:
    def __init__(self) -> None:
        self.value = 0
        self.reads = 0

    def __call__(self) -> int:
        self.reads += 1
        return self.value


def test_entries_are_bounded_least_recently_used_first() -> None:
    cache = PrincipalCache(Epoch(), max_entries=2)
    far = clock.now().timestamp() + 3600
    cache.put("a", WHO, far)
    cache.put("b", WHO, far)
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("c", WHO, far)
    assert cache.get("b") is None and cache.get("a") is not None and len(cache) == 2


def test_entries_live_ttl_seconds() -> None:
    cache = PrincipalCache(Epoch(), ttl=30)
    cache.put("a", WHO, clock.now().timestamp() + 3600)
    clock.advance(timedelta(seconds=29))
    assert cache.get("a") is not None
    clock.advance(timedelta(seconds=2))
    assert cache.get("a") is None


def test_a_moved_epoch_clears_the_cache_within_the_recheck_bound() -> None:
    epoch = Epoch()
    cache = PrincipalCache(epoch, recheck=5)
    cache.put("a", WHO, clock.now().timestamp() + 3600)
    epoch.value += 1  # another process revoked something
    assert cache.get("a") is not None  # still inside the 5 s bound
    clock.advance(timedelta(seconds=5))
    assert cache.get("a") is None


def test_by_default_the_epoch_is_read_on_every_use() -> None:
    epoch = Epoch()
    cache = PrincipalCache(epoch)
    cache.put("a", WHO, clock.now().timestamp() + 3600)
    reads = epoch.reads
    cache.get("a")
    cache.get("a")
    assert epoch.reads == reads + 2
    epoch.value += 1
    assert cache.get("a") is None


def test_drop_by_session_and_account() -> None:
    cache = PrincipalCache(Epoch())
    far = clock.now().timestamp() + 3600
    cache.put("a", Principal("user", "u1", "s1"), far)
    cache.put("b", Principal("user", "u1", "s2"), far)
    cache.put("c", Principal("user", "u2", "s3"), far)
    cache.drop_sessions({"s1"})
    assert cache.get("a") is None and cache.get("b") is not None
    cache.drop_accounts({"u1"})
    assert cache.get("b") is None and cache.get("c") is not None
