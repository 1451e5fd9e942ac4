"""Who is online (docs/presence.md): a device is online while at least one of its MQTT
sessions or its tunnel agent is connected.

The broker and the tunnel relay say when a device's connection opens and closes
(`opened`, `closed`); this counts them per device, in memory, and writes only the
transitions (the first connection opened, the last one closed) to storage/presence.py, in
the order they happen (`Database.submit`), so views and the list filter read the state
from the database. Each transition is also a `PresenceEvent` on `events` for whoever
listens (queued commands are delivered on one; the live-changes work carries them on).
At start (`reset`) every device is offline: a row still online is a connection of a run
that ended, and its reason is `server_stopping`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edge.kernel import clock
from edge.kernel.events import Hook
from storage import presence as store
from storage.database import Database
from storage.rows import Tx

CLEAN, KEEPALIVE, TAKEN_OVER, REVOKED, STOPPING, LOST = (
    "clean",
    "keepalive_timeout",
    "taken_over",
    "revoked",
    "server_stopping",
    "connection_lost",
)
REASONS = (CLEAN, KEEPALIVE, TAKEN_OVER, REVOKED, STOPPING, LOST)
log = logging.getLogger("edge.presence")


@dataclass(frozen=True)
class PresenceEvent:
    """A device came online (`online`) or went offline (with the last connection's
    `reason`)."""

    device_id: str
    org_id: str
    online: bool
    date: str
    reason: str | None = None


class Presence:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._open: dict[str, int] = {}  # device ID -> its connections open now
        self.events: Hook[PresenceEvent] = Hook("presence")
        self.connects = 0
        self.disconnects = dict.fromkeys(REASONS, 0)

    async def reset(self) -> int:
        """Nobody is online before they connect to this run; returns how many were marked."""
        return await self._db.write(lambda c: store.all_offline(c, clock.now_iso(), STOPPING))

    def is_online(self, device_id: str) -> bool:
        return self._open.get(device_id, 0) > 0

    def online_count(self) -> int:
        return len(self._open)

    def opened(self, device_id: str, org_id: str) -> None:
        self.connects += 1
        count = self._open.get(device_id, 0) + 1
        self._open[device_id] = count
        if count == 1:
            now = clock.now_iso()
            self._write(lambda c: store.online(c, device_id, now))
            self.events.emit(PresenceEvent(device_id, org_id, True, now))

    def closed(self, device_id: str, org_id: str, reason: str) -> None:
        self.disconnects[reason] = self.disconnects.get(reason, 0) + 1
        count = self._open.get(device_id, 0) - 1
        if count > 0:
            self._open[device_id] = count
            return
        self._open.pop(device_id, None)
        now = clock.now_iso()
        self._write(lambda c: store.offline(c, device_id, now, reason))
        self.events.emit(PresenceEvent(device_id, org_id, False, now, reason))

    def views(self, device_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The presence fields of these devices, as their views show them."""
        rows = self._db.read(lambda c: store.of(c, device_ids))
        return {i: _fields(rows.get(i)) for i in device_ids}

    def _write(self, change: Callable[[Tx], None]) -> None:
        """Queued in order; a failure is logged, never raised into the connection."""
        try:
            self._db.submit(change).add_done_callback(_report_failure)
        except Exception:
            log.exception("presence could not be stored")


def _fields(row: store.PresenceRow | None) -> dict[str, Any]:
    if row is None:
        return {"is_online": False, "connected_since": None, "last_disconnect_reason": None}
    return {
        "is_online": row.connected_since is not None,
        "connected_since": row.connected_since,
        "last_disconnect_reason": row.last_disconnect_reason,
    }


def _report_failure(future: Any) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("presence could not be stored", exc_info=future.exception())
