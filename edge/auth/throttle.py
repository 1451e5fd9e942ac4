"""Brute-force protection for sign-in and challenge answers.

Failures are counted in SQLite (so every process shares them) under three keys:

- the (account, client address) pair: after PAIR.free failures each further one doubles
  the wait, and at PAIR.lockout_after the pair is locked for PAIR.lockout. Guesses from
  one place stop there, while the owner signing in from another address is not refused
  (so knowing a username is not enough to lock its owner out);
- the account, from any address: locked only at a much higher rate (ACCOUNT_WIDE: many
  failures within an hour of each other, which takes many addresses once each pair is
  held to a few), a distributed guess. Each such lockout is recorded in
  `sign_in_lockouts`, which `edge check` reports;
- the client address, across accounts (ADDRESS): one place guessing many accounts.

Which of the three a kind of attempt counts under, and what a blocked caller is told, is
its `Keys` (sign-ins: all three, SIGN_IN). Enrollment with a provisioning claim
(edge/provisioning/enrollment.py) counts under the pair and the address alone: anyone may
know a claim's ID, so an account-wide count would let them lock every device out of it.

`account` is the resolved account (`user:<id>` or `staff:<id>`), so every way of writing
the same login (case, spacing, a phone number's punctuation) counts against the same
account; a login that names no account is counted under its normalized form, so the
answers do not tell whether an account exists. Wrong MFA codes are counted apart
(`second_factor`), so the right password never clears them. A success clears the pair's
count. An
admin, or `edge admin unlock`, clears every block of an account (`clear`). Every new block
is logged as a warning.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial

from edge.kernel import audit, clock, origin
from edge.kernel.errors import TooManyAttempts
from edge.kernel.events import Hook
from edge.kernel.ids import new_id
from edge.kernel.printable import for_log
from storage import throttle as store
from storage.database import Database
from storage.records import AuditEvent
from storage.rows import Tx

MESSAGE = "Too many failed sign-in attempts; try again later"
log = logging.getLogger("edge.signin")


@dataclass(frozen=True)
class Policy:
    free: int
    lockout_after: int
    lockout: timedelta
    max_backoff: timedelta = timedelta(minutes=5)
    window: timedelta = timedelta(days=1)  # a failure this long after the last starts anew

    def wait(self, failures: int) -> timedelta:
        if failures >= self.lockout_after:
            return self.lockout
        if failures < self.free:
            return timedelta(0)
        return min(timedelta(seconds=2 ** (failures - self.free)), self.max_backoff)


PAIR = Policy(free=5, lockout_after=10, lockout=timedelta(minutes=15))
ACCOUNT_WIDE = Policy(
    free=100, lockout_after=100, lockout=timedelta(minutes=15), window=timedelta(hours=1)
)
ADDRESS = Policy(free=20, lockout_after=50, lockout=timedelta(minutes=15))


@dataclass(frozen=True)
class Keys:
    """Which keys an attempt counts under (and is checked against), and the 429's message."""

    message: str = MESSAGE
    pair: bool = True
    account_wide: bool = True
    address: bool = True


SIGN_IN = Keys()


@dataclass(frozen=True)
class Outcome:
    key: str
    failures: int
    wait: timedelta
    addresses: int = 0


class Throttle:
    def __init__(self, db: Database) -> None:
        self._db = db
        # Since start, for GET /metrics: failed:<factor>, refused, locked:<scope>.
        self.counts: Counter[str] = Counter()
        # Each wrong password or MFA code at sign-in, by the org it was for (None: the login
        # named none); the pulse counts them (edge/pulse/counters.py).
        self.failures: Hook[str | None] = Hook("sign-in failures")

    def check(self, account: str, address: str | None, keys: Keys = SIGN_IN) -> None:
        """TooManyAttempts while any of the keys is waiting out a back-off or a lockout."""
        now = clock.now_iso()
        for key, _ in _keys(account, address, keys):
            row = self._db.read(partial(store.get, key=key))
            if row is not None and row["blocked_until"] > now:
                self.counts["refused"] += 1
                raise TooManyAttempts(keys.message, _seconds_until(row["blocked_until"]))

    async def failed(
        self,
        account: str,
        address: str | None,
        event: AuditEvent | None = None,
        keys: Keys = SIGN_IN,
    ) -> None:
        """Count a failure under every key. `event` (the failure's audit event) is recorded
        in the first key's write (alone when no key counts), and a lockout's event in the
        write that locks."""
        now = clock.now()
        self.counts["failed:mfa" if account.endswith("/mfa") else "failed:password"] += 1
        if keys is SIGN_IN:  # a sign-in's, not a refused enrollment's
            self.failures.emit(event.org_id if event is not None else None)
        counted = _keys(account, address, keys)
        if not counted and event is not None:
            await self._db.write(lambda conn: audit.add(conn, event))
        for i, (key, policy) in enumerate(counted):
            fail = partial(_fail, key=key, policy=policy, now=now, event=event)
            first = event is not None and i == 0
            outcome = await self._db.write(audit.along(fail, event) if first and event else fail)
            if outcome.failures == policy.lockout_after:
                self.counts["locked:" + key.partition(":")[0]] += 1
            _report(outcome, policy, account, address)

    async def succeeded(self, account: str, address: str | None) -> None:
        await self._db.write(lambda c: store.clear(c, _pair_key(account, address)))

    async def clear(self, account: str, org_id: str | None = None, by: str = "admin") -> int:
        """Lift every block of this account, of both factors, from every address; how many.
        Recorded in the audit log (by the caller of the running request, or `by` the
        command line's operator) in the same write as the first factor's."""
        kind, _, account_id = account.partition(":")
        actor = origin.origin().principal
        cleared_event = audit.event(
            "sign_in_blocks_cleared",
            actor,
            org_id=org_id if actor is None else actor.org_id,
            target=(kind, account_id),
            actor_kind=None if actor is not None else by,
        )
        cleared = 0
        for i, counted in enumerate((account, second_factor(account))):
            clear = partial(_clear, account=counted)
            cleared += await self._db.write(audit.along(clear, cleared_event) if i == 0 else clear)
        log.warning("sign-in blocks of %s cleared by an admin (%d)", for_log(account), cleared)
        return cleared


def _clear(conn: Tx, *, account: str) -> int:
    return store.clear_prefixed(conn, _account_key(account), _pair_key(account, ""))


def second_factor(account: str) -> str:
    """Where wrong MFA codes of an account are counted: apart from its wrong passwords, so
    that signing in with the right password never clears the count of wrong codes."""
    return f"{account}/mfa"


def _fail(
    conn: Tx, *, key: str, policy: Policy, now: datetime, event: AuditEvent | None = None
) -> Outcome:
    row = store.get(conn, key)
    fresh = row is None or clock.parse(row["updated_date"]) < now - policy.window
    failures = 1 if fresh or row is None else row["failures"] + 1
    wait = policy.wait(failures)
    until = clock.iso(now + wait)
    store.record(conn, key, failures, until, clock.iso(now))
    if event is not None and failures == policy.lockout_after:
        audit.add(conn, _locked(event, key, failures, until))
    if key.startswith("acct:") and failures == policy.lockout_after:
        account = key.removeprefix("acct:")
        addresses = store.count_prefixed(conn, _pair_key(account, ""))
        store.record_lockout(conn, account, failures, addresses, until, clock.iso(now))
        return Outcome(key, failures, wait, addresses)
    return Outcome(key, failures, wait)


def _locked(failed: AuditEvent, key: str, failures: int, until: str) -> AuditEvent:
    """The lockout a failure caused, as its own event (same actor, target and origin)."""
    scope = {"pair": "account_from_address", "acct": "account", "addr": "address"}
    details = {**failed.details, "scope": scope[key.partition(":")[0]], "failures": failures}
    details["until"] = until
    return replace(failed, id=new_id(), action="sign_in_locked", details=details)


def _report(outcome: Outcome, policy: Policy, account: str, address: str | None) -> None:
    """A warning when a key starts waiting, and when it is locked out."""
    if outcome.failures not in (policy.free, policy.lockout_after) or not outcome.wait:
        return
    what = "locked out" if outcome.failures >= policy.lockout_after else "backing off"
    scope = outcome.key.partition(":")[0]
    log.warning(
        "sign-in %s (%s): account %s, address %s, %d failures, for %d s%s",
        what,
        {"pair": "this account from this address", "acct": "account-wide", "addr": "address"}[
            scope
        ],
        for_log(account),
        for_log(address or "-"),
        outcome.failures,
        int(outcome.wait.total_seconds()),
        f", from {outcome.addresses} addresses" if scope == "acct" else "",
    )


def _account_key(account: str) -> str:
    return f"acct:{account}"


def _pair_key(account: str, address: str | None) -> str:
    return f"pair:{account}@{address or ''}"


def _keys(account: str, address: str | None, keys: Keys = SIGN_IN) -> list[tuple[str, Policy]]:
    out = [(_pair_key(account, address), PAIR)] if keys.pair else []
    if keys.account_wide:
        out.append((_account_key(account), ACCOUNT_WIDE))
    if address and keys.address:
        out.append((f"addr:{address}", ADDRESS))
    return out


def _seconds_until(iso: str) -> int:
    return max(1, math.ceil((clock.parse(iso) - clock.now()).total_seconds()))
