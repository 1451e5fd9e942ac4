"""What /v2/health and /v2/health/ready report: the state of the parts a request needs,
found by a background probe so that answering stays as cheap as a constant.

The probe runs at start (before the first request is served) and then every
PROBE_SECONDS: the database answers a query on the event loop's reader, and the writer
thread commits an empty transaction within WRITER_SECONDS; the MQTT broker (`mqtt`) is
ok while every enabled listener accepts connections (absent when all are turned off).
While serving, /v2/health is always a 200 (the SDK's
HealthInfo: `status` is ok, degraded, starting or stopping, and each component has its
own entry); /v2/health/ready is 200 only when every component is ok and the server is not
stopping, else 503, for load balancers and orchestrators.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from edge import clock
from storage.database import Database

PROBE_SECONDS = 5.0
WRITER_SECONDS = 5.0
OK = "ok"
log = logging.getLogger("edge.health")


@dataclass
class Health:
    components: dict[str, str] = field(default_factory=dict)
    checked: str | None = None
    stopping: bool = False

    @property
    def status(self) -> str:
        if self.stopping:
            return "stopping"
        if self.checked is None:
            return "starting"
        return OK if all(v == OK for v in self.components.values()) else "degraded"

    @property
    def ready(self) -> bool:
        return self.status == OK

    def report(self) -> dict[str, Any]:
        """The HealthInfo body: `status` first, then each component and the probe's time."""
        report: dict[str, Any] = {"status": self.status, **self.components}
        if self.checked is not None:
            report["checked"] = self.checked
        return report

    def not_ready(self) -> str:
        if self.status != "degraded":
            return f"Not ready: {self.status}"
        failing = [f"{k} {v}" for k, v in self.components.items() if v != OK]
        return "Not ready: " + ", ".join(failing)


class Probe:
    def __init__(
        self, db: Database, health: Health, broker: Callable[[], str | None] | None = None
    ) -> None:
        self._db = db
        self.health = health
        self._broker = broker

    async def once(self) -> None:
        found = {"database": self._database(), "writer": await self._writer()}
        broker = self._broker_state()
        if broker is not None:
            found["mqtt"] = broker
        if found != self.health.components and self.health.checked is not None:
            log.warning("health changed: %s", ", ".join(f"{k} {v}" for k, v in found.items()))
        self.health.components = found
        self.health.checked = clock.now_iso()

    def _broker_state(self) -> str | None:
        if self._broker is None:
            return None
        try:
            return self._broker()
        except Exception as exc:  # a failing probe is a finding
            return f"failing ({type(exc).__name__})"

    async def run(self, stop: asyncio.Event) -> None:
        """Probe every PROBE_SECONDS until `stop`; a failing probe is a finding, never fatal."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PROBE_SECONDS)
            if not stop.is_set():
                await self.once()

    def _database(self) -> str:
        try:
            self._db.ping()
        except Exception:  # closed, corrupt, disk gone: all mean the same to a client
            return "unavailable"
        return OK

    async def _writer(self) -> str:
        try:
            await asyncio.wait_for(self._db.write(lambda c: None), WRITER_SECONDS)
        except TimeoutError:
            return "stalled"
        except Exception:
            return "unavailable"
        return OK
