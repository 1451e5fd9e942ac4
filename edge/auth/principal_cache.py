"""Verified principals, kept in memory so a token is not verified on every request.

Verifying an access token costs an ES256 signature check plus the session and account
lookups (100+ us). The cache maps the token to the principal it proved, bounded (LRU,
`max_entries`) and short-lived (`ttl`). Entries leave it:

- at once, in this process, when `Tokens` revokes a session or an account's sessions
  (sign-out, password change, admin status lost, role admin turned off, suspension);
- for everything else, including writes by other processes or straight to the database,
  through the auth epoch (migration 0006): triggers bump it whenever a session is revoked
  or deleted or a user is suspended, deleted or given a new password. The cache reads it
  (with the other epochs, in one statement per snapshot: storage/epochs.py; a few us) at
  most every `recheck` seconds and clears itself when it moved, so a revocation made
  elsewhere stops a cached token within `recheck` seconds. The default, 0, reads it on
  every use: no stale window at all, for a few us of the 100+ us saved. A positive
  `recheck` trades that bound for those us;
- after `ttl` seconds whatever happens, and the token's own expiry is checked on every use.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from edge.kernel import clock
from edge.kernel.principal import Principal

DEFAULT_TTL = 30.0
DEFAULT_RECHECK = 0.0
DEFAULT_MAX_ENTRIES = 10_000


@dataclass(frozen=True)
class Entry:
    principal: Principal
    expires: float  # the token's `exp`, epoch seconds
    cached_until: float


class PrincipalCache:
    def __init__(
        self,
        read_epoch: Callable[[], int],
        *,
        ttl: float = DEFAULT_TTL,
        recheck: float = DEFAULT_RECHECK,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        self._read_epoch = read_epoch
        self._ttl = ttl
        self._recheck = recheck
        self._max = max_entries
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._epoch: int | None = None
        self._epoch_checked = float("-inf")

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, token: str, now: float | None = None) -> Entry | None:
        """The entry of a token still fresh here at `now` (epoch seconds; the clock's when
        not given), or None (the caller verifies again)."""
        if now is None:
            now = clock.now().timestamp()
        self._sync(now)
        entry = self._entries.get(token)
        if entry is None:
            return None
        if entry.cached_until <= now:
            del self._entries[token]
            return None
        self._entries.move_to_end(token)
        return entry

    def put(self, token: str, principal: Principal, expires: float) -> None:
        now = clock.now().timestamp()
        self._sync(now)
        self._entries[token] = Entry(principal, expires, now + self._ttl)
        self._entries.move_to_end(token)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def drop_sessions(self, session_ids: set[str]) -> None:
        self._drop(lambda p: p.session_id in session_ids)

    def drop_accounts(self, account_ids: set[str]) -> None:
        self._drop(lambda p: p.account_id in account_ids)

    def clear(self) -> None:
        self._entries.clear()

    def _drop(self, stale: Callable[[Principal], bool]) -> None:
        for token in [t for t, e in self._entries.items() if stale(e.principal)]:
            del self._entries[token]

    def _sync(self, now: float) -> None:
        """Clear everything when the database's auth epoch moved since the last look."""
        if now - self._epoch_checked < self._recheck:
            return
        self._epoch_checked = now
        epoch = self._read_epoch()
        if epoch != self._epoch:
            self._entries.clear()
            self._epoch = epoch
