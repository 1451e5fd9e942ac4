"""Operator alerts: a mail to the operator when a request fails with 500, 503 or 507.

At most one alert per (status, route) in each window, so a failing endpoint under load
sends one mail, not thousands. The mail names the route and the request ID only: the
traceback stays in the log, and nothing from the request (bodies, tokens) goes out.
The window is kept per process; a repeat from another worker costs one extra mail at most.

An alert goes out through the outbox, which is in the database: while the disk is full or
the data folder refuses writes, the very failure being reported keeps the alert from being
queued. Such an alert is sent at once, straight through the mailer (SMTP needs no disk), so
the operator hears of a full disk while it is full. Only when that fails too (no SMTP
server set, so mail goes to files in the same refusing folder, or the server does not
answer) is it held in memory (at most HELD_LIMIT; past that each one is logged and
dropped), logged as an error at once, and queued every RETRY_SECONDS until a write
succeeds. One still held when the server stops is logged, whole, as lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime, timedelta

from edge.delivery.mailer import DeliveryError, Mailer, build_message
from edge.kernel import clock, ids
from storage import outbox
from storage.database import Database
from storage.rows import Tx
from storage.space import DiskFull, NotWritable

WINDOW = timedelta(minutes=10)
PURPOSE = "operator_alert"
HELD_LIMIT = 100  # alerts held while the disk refuses writes (one per status and route)
RETRY_SECONDS = 5.0
log = logging.getLogger("edge.delivery.alerts")

Message = dict[str, object]


class OperatorAlerts:
    def __init__(
        self,
        db: Database,
        recipient: str,
        site_url: str,
        mailer: Mailer | None = None,
        mail_from: str = "",
    ) -> None:
        self._db = db
        self._recipient = recipient
        self._site_url = site_url
        self._mailer = mailer  # for an alert the outbox cannot take (None: hold it)
        self._from = mail_from
        self.sent_directly = 0
        self._last: dict[tuple[int, str], datetime] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self.held: list[Message] = []  # refused by the disk, oldest first
        self.dropped = 0  # past HELD_LIMIT: logged, never queued
        self._retry: asyncio.Task[None] | None = None

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

    def _message(self, status: int, route: str, request_id: str, now: datetime) -> Message:
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

    async def _queue(self, message: Message) -> None:
        try:
            await self._db.write(lambda c: outbox.enqueue(c, message))
        except (DiskFull, NotWritable) as exc:
            if not await self._send_directly(message, exc):
                self._hold(message, exc)
        except Exception:
            log.exception("could not queue the operator alert")

    async def _send_directly(self, message: Message, reason: Exception) -> bool:
        """Send an alert the outbox refused straight through the mailer; whether it went."""
        if self._mailer is None:
            return False
        note = (
            "\nThis alert was sent directly: the disk refused to queue it (full, or\n"
            "read-only), so it is not in the outbox.\n"
        )
        mail = build_message({**message, "body_text": f"{message['body_text']}{note}"}, self._from)
        try:
            await self._mailer.send(mail)
        except (DeliveryError, DiskFull, NotWritable, OSError) as exc:
            log.error("operator alert could not be sent directly either (%s)", exc)
            return False
        self.sent_directly += 1
        log.error(
            "operator alert sent directly, the disk refusing to queue it (%s): %s",
            reason,
            message["subject"],
        )
        return True

    def _hold(self, message: Message, reason: Exception) -> None:
        if len(self.held) >= HELD_LIMIT:
            self.dropped += 1
            log.error(
                "operator alert dropped (%d held already while the disk refuses writes): %s",
                len(self.held),
                message["subject"],
            )
            return
        self.held.append(message)
        log.error(
            "operator alert held in memory until the disk takes writes again (%s): %s",
            reason,
            message["subject"],
        )
        if self._retry is None or self._retry.done():
            self._retry = asyncio.get_running_loop().create_task(self._retry_held())

    async def _retry_held(self) -> None:
        while self.held:
            await asyncio.sleep(RETRY_SECONDS)
            await self.flush()

    async def flush(self) -> int:
        """Queue the held alerts, in one write; how many were queued (none while the disk
        still refuses)."""
        if not self.held:
            return 0
        now = clock.now()
        batch = [_late(message, now) for message in self.held]

        def enqueue(conn: Tx) -> None:
            for message in batch:
                outbox.enqueue(conn, message)

        try:
            await self._db.write(enqueue)
        except (DiskFull, NotWritable):
            return 0
        except Exception:
            log.exception("could not queue the held operator alerts")
            return 0
        del self.held[: len(batch)]  # alerts held meanwhile wait for the next try
        log.warning("queued %d operator alert(s) held while the disk refused writes", len(batch))
        return len(batch)

    async def drain(self) -> None:
        """Wait for queued alerts to be written (before the database closes); a last try
        for the held ones, and any the disk still refuses go to the log, whole."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self._retry is not None:
            self._retry.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retry
            self._retry = None
        await self.flush()
        for message in self.held:
            log.error(
                "operator alert lost: the disk refused writes until the server stopped: %s\n%s",
                message["subject"],
                message["body_text"],
            )


def _late(message: Message, now: datetime) -> Message:
    """A held alert as queued: due now, and saying why it comes late."""
    waited = now - clock.parse(str(message["created_date"]))
    note = (
        f"\nThis alert waited in memory for {int(waited.total_seconds())} s: the disk refused\n"
        "writes (full, or read-only) when it was raised, so it could not be queued sooner.\n"
    )
    body = f"{message['body_text']}{note}"
    return {**message, "body_text": body, "next_attempt_at": clock.iso(now)}
