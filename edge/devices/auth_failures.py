"""MQTT authentication failures in the audit log (docs/audit.md), aggregated so that a
stranger on the LAN cannot fill the table: one `mqtt_auth_failed` event per client
address and user name per minute, with a `count`.

The first failure of a minute is written at once (count 1), so an attack shows in the log
while it goes on; the count is brought up to date when the minute ends. One address gets
at most `NAMES_PER_ADDRESS` user names a minute; failures under further names are counted
in one more event whose user name is `*`, and past `MAX_EVENTS` events in a minute the
rest are counted in one whose address is `*` too. The user name is kept only when it can
name an account (an ID); anything else is recorded as `NOT_AN_ID`, since people type
secrets into the user name field (an API key with the fields swapped, a token with no
password), as sign-in failures keep no login text either. The password is never seen here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass

from edge.kernel import audit, clock
from edge.kernel.ids import looks_like_id
from storage import audit as store
from storage.database import Database
from storage.records import AuditEvent
from storage.rows import Tx

ACTION = "mqtt_auth_failed"
NAMES_PER_ADDRESS = 10
MAX_EVENTS = 1000  # a minute's, all addresses together
OTHERS = "*"
NOT_AN_ID = "(not an ID)"
log = logging.getLogger("edge.mqtt")


@dataclass
class _Tally:
    event: AuditEvent
    count: int = 1
    written: int = 1


class AuthFailures:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._minute = ""
        self._tallies: dict[tuple[str, str], _Tally] = {}
        self._names: dict[str, int] = {}  # user names of each address this minute

    def failed(self, address: str, username: str | None) -> None:
        minute = clock.now_iso()[:16]  # YYYY-MM-DDTHH:MM
        if minute != self._minute:
            self.close_minute()
            self._minute = minute
            _at_minute_end(functools.partial(self._close_if, minute))
        name = self._name(address, _kept(username or ""))
        if (address, name) not in self._tallies and len(self._tallies) >= MAX_EVENTS:
            address, name = OTHERS, OTHERS
        tally = self._tallies.get((address, name))
        if tally is not None:
            tally.count += 1
            return
        event = audit.event(ACTION, None, details={"username": name, "count": 1})
        event = dataclasses.replace(event, client=address)
        self._tallies[(address, name)] = _Tally(event)
        self._write(lambda c: audit.add(c, event))

    def close_minute(self) -> None:
        """Write the counts that grew since their event was written; start afresh."""
        for tally in self._tallies.values():
            if tally.count > tally.written:
                self._write(
                    functools.partial(store.recount, event_id=tally.event.id, count=tally.count)
                )
        self._tallies.clear()
        self._names.clear()

    def _close_if(self, minute: str) -> None:
        """The timer of a minute closes that minute only: a failure in the half second
        before it fired has already closed it and opened the next, which it must not cut."""
        if self._minute == minute:
            self.close_minute()

    def _name(self, address: str, name: str) -> str:
        if (address, name) in self._tallies:
            return name
        if self._names.get(address, 0) >= NAMES_PER_ADDRESS:
            return OTHERS
        self._names[address] = self._names.get(address, 0) + 1
        return name

    def _write(self, fn: Callable[[Tx], None]) -> None:
        try:
            self._db.submit(fn).add_done_callback(_report)
        except Exception:  # the database closing: an audit record must not break a refusal
            log.exception("mqtt: an authentication failure could not be audited")


def _kept(username: str) -> str:
    """What of a refused user name may be stored: an ID as it is, nothing else."""
    return username if not username or looks_like_id(username) else NOT_AN_ID


def _at_minute_end(close: Callable[[], None]) -> None:
    """Close the minute when it ends, even if no further failure comes."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    now = clock.now()
    loop.call_later(60.5 - now.second - now.microsecond / 1e6, close)


def _report(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        failure = future.exception()
        log.error("mqtt: an authentication failure could not be audited", exc_info=failure)
