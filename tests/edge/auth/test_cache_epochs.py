"""The in-process caches of an authenticated request (verified tokens, device API keys,
callers' permissions) read the epochs they watch in one statement per event-loop
snapshot (storage/epochs.py), and each still drops its entries when its own epoch moves.

Counted as SQL statements (`Database.counting`), not time: the same on any machine.
"""

from __future__ import annotations

from edge.app import Site
from edge.kernel.principal import Principal
from storage import access, credentials, epochs, users

USER = Principal("user", "u" * 16, "s" * 16, "o" * 16)


def _look_up_all(site: Site) -> None:
    services = site.services
    assert services.tokens.cache is not None and services.device_keys.cache is not None
    assert services.permissions.cache is not None
    services.tokens.cache.get("a token")
    services.device_keys.cache.get("a key")
    services.permissions.cache.get(USER)


async def test_the_caches_of_a_request_read_their_epochs_once(site: Site) -> None:
    db = site.services.db
    _look_up_all(site)  # opens this loop turn's snapshot
    with db.counting() as counts:
        _look_up_all(site)
    assert counts["statements"] == 0  # kept for the rest of the snapshot
    db.end_snapshot()
    with db.counting() as counts:
        _look_up_all(site)
    # the next snapshot's BEGIN, then one read of every epoch (it was one per cache)
    assert counts["statements"] == 2, counts


async def test_each_cache_drops_its_entries_when_its_own_epoch_moves(site: Site) -> None:
    services, db = site.services, site.services.db
    tokens, permissions = services.tokens.cache, services.permissions.cache
    assert tokens is not None and permissions is not None
    caller = services.permissions.caller(USER)  # cached
    tokens.put("a token", USER, expires=4_000_000_000.0)
    assert tokens.get("a token") is not None and permissions.get(USER) is caller

    await db.write(access.bump_epoch)
    assert permissions.get(USER) is None, "a stale permission answer was kept"
    assert tokens.get("a token") is not None  # the auth epoch did not move

    await db.write(credentials.bump_auth_epoch)
    assert tokens.get("a token") is None, "a revoked token was kept"
    assert db.read(epochs.read) == (
        db.read(credentials.auth_epoch),
        db.read(access.epoch),
        db.read(users.epoch),
    )
