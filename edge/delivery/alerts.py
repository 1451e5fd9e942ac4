"""Operator alerts: a mail to the operator when a request fails with 500 or 503.

At most one alert per (status, route) in each window, so a failing endpoint under load
sends one mail, not thousands. The mail names the route and the request ID only: the
traceback stays in the log, and nothing from the request (bodies, tokens) goes out.
The window is kept per process; a repeat from another worker costs one extra mail at most.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from edge import clock, ids
from storage import outbox
from storage.database import Database

WINDOW = timedelta(minutes=10)
PURPOSE = "operator_alert"
log = logging.getLogger("edge.delivery.alerts")


class OperatorAlerts:
    def __init__(self, db: Database, recipient: str, site_url: str) -> None:
        self._db = db
        self._recipient = recipient
        self._site_url = site_url
        self._last: dict[tuple[int, str], datetime] = {}
        self._pending: set[asyncio.Task[None]] = set()

    def report(self, status: int, method: str, route: str, request_id: str) -> None:
        """Queue an alert unless one for the same status and route went out recently."""
        now = clock.now()
        key = (status, f"{method} {route}")
        last = self._last.get(key)
        if last is not None and now - last < WINDOW:
            return
        self._last[key] = now
        message = self._message(status, key[1], request_id, now)
        task = asyncio.get_running_loop().create_task(self._queue(message))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _message(
        self, status: int, route: str, request_id: str, now: datetime
    ) -> dict[str, object]:
        text = (
            f"The edge server at {self._site_url} answered {status} on {route}\n"
            f"at {clock.iso(now)} (request ID {request_id}).\n\n"
            "The server log has the details under that request ID. Further failures of the\n"
            f"same kind are not mailed for {int(WINDOW.total_seconds() // 60)} minutes.\n"
        )
        return {
            "id": ids.new_id(),
            "channel": "mail",
            "purpose": PURPOSE,
            "recipient": self._recipient,
            "subject": f"edge: {status} on {route}",
            "body_text": text,
            "next_attempt_at": clock.iso(now),
            "created_date": clock.iso(now),
        }

    async def _queue(self, message: dict[str, object]) -> None:
        try:
            await self._db.write(lambda c: outbox.enqueue(c, message))
        except Exception:
            log.exception("could not queue the operator alert")

    async def drain(self) -> None:
        """Wait for queued alerts to be written (before the database closes)."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
