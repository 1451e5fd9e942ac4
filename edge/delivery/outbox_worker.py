"""The outbox worker: delivers queued mail and SMS, retrying with exponential back-off.

Each step leases the due messages (so a second worker process would not take them too),
delivers them one by one, and records the outcome: `sent`, or another attempt at
`now + BASE_DELAY * 2**(attempts-1)` (capped at MAX_DELAY) with `last_error`, or `failed`
once `mail_max_attempts` attempts have failed. Time comes from edge.kernel.clock, so tests
move the clock and call `step()` instead of sleeping.

Delivery is at least once: a crash after the server accepted a mail but before `sent`
was recorded sends it again when the lease runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import Any

from edge.delivery.mailer import DeliveryError, Mailer, build_message, mailer_for
from edge.delivery.messages import SECRET_PURPOSES
from edge.delivery.sms import SmsSender, sender_for
from edge.kernel import clock
from edge.kernel.config import Config
from storage import layout, outbox
from storage.database import Database
from storage.space import DiskFull, NotWritable

log = logging.getLogger("edge.outbox")
BASE_DELAY = timedelta(seconds=30)
MAX_DELAY = timedelta(hours=1)
LEASE = timedelta(minutes=5)
BATCH = 50
SCRUBBED = "(removed once delivered: it held a secret)"
POLL_SECONDS = 5.0  # how often the worker looks for due messages


class OutboxWorker:
    def __init__(
        self,
        db: Database,
        config: Config,
        mailer: Mailer | None = None,
        sms: SmsSender | None = None,
    ) -> None:
        folder = config.data_dir / layout.OUTBOX_DIR
        self._db = db
        self._from = config.mail_from
        self._max_attempts = config.mail_max_attempts
        self.poll_seconds = POLL_SECONDS
        self.mailer = mailer or mailer_for(config, folder / "mail")
        self.sms = sms or sender_for(
            config.sms_gateway_url,
            config.sms_gateway_body,
            config.sms_gateway_auth_header,
            folder / "sms",
        )

    async def step(self) -> int:
        """Deliver what is due now; returns how many messages were tried."""
        now = clock.now()
        lease = clock.iso(now + LEASE)
        due = await self._db.write(lambda c: outbox.claim_due(c, clock.iso(now), lease, BATCH))
        for row in due:
            await self._deliver(row)
        return len(due)

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until `stop` is set; a failing step is logged, never fatal."""
        while not stop.is_set():
            try:
                tried = await self.step()
            except (DiskFull, NotWritable) as exc:  # a line, not a traceback every 5 s
                log.warning("outbox delivery waits: the disk refuses writes (%s)", exc)
                tried = 0
            except Exception:
                log.exception("outbox delivery step failed")
                tried = 0
            if tried == BATCH:
                continue  # more may be due: no pause
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.poll_seconds)

    async def _deliver(self, row: dict[str, Any]) -> None:
        try:
            await self._send(row)
        except Exception as exc:
            reason = str(exc) if isinstance(exc, DeliveryError) else type(exc).__name__
            await self._record_failure(row, reason)
            return
        values = {"status": "sent", "sent_date": clock.now_iso(), "attempts": row["attempts"] + 1}
        values.update(_scrubbed(row))
        await self._db.write(lambda c: outbox.mark(c, row["id"], values))

    async def _send(self, row: dict[str, Any]) -> None:
        if row["channel"] == "sms":
            await self.sms.send(str(row["id"]), row["recipient"], row["body_text"])
        else:
            await self.mailer.send(build_message(row, self._from))

    async def _record_failure(self, row: dict[str, Any], reason: str) -> None:
        attempts = int(row["attempts"]) + 1
        values: dict[str, Any] = {"attempts": attempts, "last_error": reason}
        if attempts >= self._max_attempts:
            values["status"] = "failed"
            values.update(_scrubbed(row))
            log.error(
                "giving up on %s %s after %d attempts: %s",
                row["channel"],
                row["id"],
                attempts,
                reason,
            )
        else:
            values["next_attempt_at"] = clock.iso(clock.now() + backoff(attempts))
            log.warning(
                "%s %s not delivered (attempt %d): %s", row["channel"], row["id"], attempts, reason
            )
        await self._db.write(lambda c: outbox.mark(c, row["id"], values))


def _scrubbed(row: dict[str, Any]) -> dict[str, Any]:
    """For a message that held a secret (a tunnel's token), an empty body: once delivered
    or given up on, no copy of the secret stays in the outbox."""
    if row["purpose"] not in SECRET_PURPOSES:
        return {}
    return {"body_text": SCRUBBED, "body_html": None}


def backoff(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failure: 30 s, 1 min, 2 min, ... at most an hour."""
    delay: timedelta = BASE_DELAY * (2 ** (attempts - 1))
    return min(delay, MAX_DELAY)
