"""Metering without work on the hot paths.

Counters (MQTT messages) are counted where something is counted already: the broker's
reader adds a chunk's PUBLISH count to its client session (one addition per chunk it
reads, not per message), and `source`, a callable `edge/app.py` hands the meter, collects
and resets those counts per organization. The meter reads it every `FLUSH_SECONDS` and
adds the counts to the day's usage in one transaction, and once more on shutdown.

Gauges (devices, users, data bytes, file bytes) are snapshotted by SQL once per UTC day,
on the first flush of the day, on a reader thread. Each flush also debits the closed
days not yet debited: one `usage` entry per organization, day and meter, written in the
same transaction that marks that usage debited, so nothing is debited twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from edge.billing import rates as pricing
from edge.kernel import clock, ids
from storage import billing as store
from storage.database import Database
from storage.records import BillingEntry
from storage.rows import Tx

FLUSH_SECONDS = 60.0
log = logging.getLogger("edge.billing")
Source = Callable[[], Mapping[str, int]]


@dataclass
class Flushed:
    """What one flush did: messages added, whether it took the day's snapshot, debits."""

    messages: int = 0
    snapshot: bool = False
    debits: int = 0


class Meter:
    def __init__(self, db: Database, interval: float = FLUSH_SECONDS) -> None:
        self._db = db
        self._interval = interval
        self._pending: dict[str, int] = {}
        self.source: Source | None = None

    def count(self, org_id: str, messages: int) -> None:
        """Add MQTT messages of an organization (the broker's counts arrive through
        `source`; this is for other producers)."""
        self._pending[org_id] = self._pending.get(org_id, 0) + messages

    @property
    def pending(self) -> int:
        return sum(self._pending.values())

    async def flush(self) -> Flushed:
        done = Flushed()
        today = clock.now().date().isoformat()
        done.messages = await self._flush_counts(today)
        done.snapshot = await self._snapshot(today)
        done.debits = await self._db.write(lambda c: _debit(c, today, clock.now_iso()))
        return done

    async def _flush_counts(self, today: str) -> int:
        if self.source is not None:
            for org_id, messages in self.source().items():
                self.count(org_id, messages)
        batch, self._pending = self._pending, {}
        if not batch:
            return 0
        try:
            await self._db.write(lambda c: store.add_counts(c, today, "mqtt_messages", batch))
        except BaseException:
            for org_id, messages in batch.items():  # counted again at the next flush
                self.count(org_id, messages)
            raise
        return sum(batch.values())

    async def _snapshot(self, today: str) -> bool:
        if self._db.read(lambda c: store.snapshot_taken(c, today)):
            return False
        values = await self._db.scan(store.gauges)
        now = clock.now_iso()
        return await self._db.write(lambda c: store.put_snapshot(c, today, values, now))

    async def run(self, stop: asyncio.Event) -> None:
        """Flush every interval until asked to stop; then write the counts once more (the
        snapshot and the debits wait for the next start)."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._interval)
            try:
                if stop.is_set():
                    await self._flush_counts(clock.now().date().isoformat())
                else:
                    await self.flush()
            except Exception:  # counts stay pending; usage is debited at a later flush
                log.exception("billing: could not record metered usage")


def _debit(conn: Tx, today: str, now: str) -> int:
    """Debit every closed day's usage not yet debited; how many entries were added."""
    open_rows = store.undebited(conn, today)
    rates = {
        org_id: pricing.effective(stored)
        for org_id, stored in store.rates_of(conn, (r["org_id"] for r in open_rows)).items()
    }
    added = 0
    for row in open_rows:
        points = pricing.cost(row["meter"], row["quantity"], rates[row["org_id"]][row["meter"]])
        if points:
            store.add(conn, _usage_entry(row, points, now))
            added += 1
        store.mark_debited(conn, row["org_id"], row["day"], row["meter"])
    return added


def _usage_entry(row: dict[str, Any], points: int, now: str) -> BillingEntry:
    meter = row["meter"]
    return BillingEntry(
        id=ids.new_id(),
        org_id=row["org_id"],
        kind="usage",
        points=-points,
        meter=meter,
        quantity=row["quantity"],
        day=row["day"],
        description=f"{row['quantity']} {meter} on {row['day']}",
        tags=[],
        created_date=now,
        created_by=None,
        last_updated_date=now,
        last_updated_by=None,
    )
