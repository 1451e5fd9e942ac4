"""Brute-force protection for sign-in and challenge answers.

Failures are counted per account (the login as typed, so the count never tells whether
the account exists) and per client address, in SQLite so every process shares them.
After `free` failures each further one doubles the wait; at `lockout_after` the key is
locked for `lockout`. A success clears the account's count (not the address's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

import apsw

from edge import clock
from edge.errors import TooManyAttempts
from storage import throttle as store
from storage.database import Database

MESSAGE = "Too many failed sign-in attempts; try again later"


@dataclass(frozen=True)
class Policy:
    free: int
    lockout_after: int
    lockout: timedelta
    max_backoff: timedelta = timedelta(minutes=5)

    def wait(self, failures: int) -> timedelta:
        if failures >= self.lockout_after:
            return self.lockout
        if failures < self.free:
            return timedelta(0)
        return min(timedelta(seconds=2 ** (failures - self.free)), self.max_backoff)


ACCOUNT = Policy(free=5, lockout_after=10, lockout=timedelta(minutes=15))
ADDRESS = Policy(free=20, lockout_after=50, lockout=timedelta(minutes=15))


class Throttle:
    def __init__(self, db: Database) -> None:
        self._db = db

    def check(self, account: str, address: str | None) -> None:
        """TooManyAttempts while either key is waiting out a back-off or a lockout."""
        for key in _keys(account, address):
            row = self._db.read(partial(store.get, key=key))
            if row is not None and row["blocked_until"] > clock.now_iso():
                raise TooManyAttempts(MESSAGE, _seconds_until(row["blocked_until"]))

    async def failed(self, account: str, address: str | None) -> None:
        now = clock.now()
        for key in _keys(account, address):
            policy = ADDRESS if key.startswith("addr:") else ACCOUNT

            await self._db.write(partial(_fail, key=key, policy=policy, now=now))

    async def succeeded(self, account: str) -> None:
        await self._db.write(lambda c: store.clear(c, _account_key(account)))


def _fail(conn: apsw.Connection, *, key: str, policy: Policy, now: datetime) -> None:
    row = store.get(conn, key)
    failures = (row["failures"] if row else 0) + 1
    until = clock.iso(now + policy.wait(failures))
    store.record(conn, key, failures, until, clock.iso(now))


def _account_key(account: str) -> str:
    return f"acct:{account}"


def _keys(account: str, address: str | None) -> list[str]:
    keys = [_account_key(account)]
    if address:
        keys.append(f"addr:{address}")
    return keys


def _seconds_until(iso: str) -> int:
    return max(1, math.ceil((clock.parse(iso) - clock.now()).total_seconds()))
