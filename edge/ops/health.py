"""What /v2/health and /v2/health/ready report: the state of the parts a request needs,
found by a background probe so that answering stays as cheap as a constant.

The probe runs at start (before the first request is served) and then every
PROBE_SECONDS: the database answers a query on the event loop's reader; the writer
thread commits a one-page write within WRITER_SECONDS (`writer`: `full` or `not writable`
when SQLite refuses it, or refused any client's write since the last probe: it once
committed an empty transaction, which writes nothing and so succeeded on a full disk);
and the data folder takes a small write of a new block (`storage`: `full` while the disk
has no room, so writes answer 507, `not writable` while it refuses writes, so they answer
503; the writer's page may land in WAL space the file already has); the MQTT broker (`mqtt`) is
ok while every enabled listener accepts connections (absent when all are turned off).
A change is logged at WARNING when a part got worse and at INFO otherwise (a recovery, the
broker starting); the first reading only when a part fails (at WARNING). So a clean start
logs one INFO line, once the broker listens, and a failed start nothing of health.
While serving, /v2/health is always a 200 (the SDK's
HealthInfo: `status` is ok, degraded, starting or stopping, and each component has its
own entry); /v2/health/ready is 200 only when every component is ok and the server is not
stopping, else 503, for load balancers and orchestrators.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edge.kernel import clock
from storage import layout, space
from storage.database import Database, heartbeat

PROBE_SECONDS = 5.0
WRITER_SECONDS = 5.0
STORAGE_SECONDS = 5.0
OK = "ok"
STARTING = "starting"  # a part not started yet (the broker, at the probe's first reading)
FULL, NOT_WRITABLE, STALLED = "full", "not writable", "stalled"
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
        self._folder = db.path.parent / layout.TMP_DIR  # beside the blobs' temporary files
        self._storage_check: asyncio.Future[None] | None = None
        self._refusals_seen = db.refusals

    async def once(self) -> None:
        found = {
            "database": self._database(),
            "writer": await self._writer(),
            "storage": await self._storage(),
        }
        broker = self._broker_state()
        if broker is not None:
            found["mqtt"] = broker
        worse = _worse(self.health.components, found)
        if worse or (found != self.health.components and self.health.checked is not None):
            shown = ", ".join(f"{k} {v}" for k, v in found.items())
            log.log(logging.WARNING if worse else logging.INFO, "health changed: %s", shown)
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

    async def _storage(self) -> str:
        """Whether the data folder takes a write now. A check that has not returned by the
        next probe (a disk hanging on fsync) is `stalled`, and no second one is started."""
        if self._storage_check is not None and not self._storage_check.done():
            return STALLED
        check = _on_own_thread(space.check_writable, self._folder)
        check.add_done_callback(_retrieved)
        self._storage_check = check
        try:
            await asyncio.wait_for(asyncio.shield(check), STORAGE_SECONDS)
        except TimeoutError:
            return STALLED
        except space.DiskFull:
            return FULL
        except space.NotWritable:
            return NOT_WRITABLE
        except Exception:  # the folder gone: a finding too
            return "unavailable"
        return OK

    async def _writer(self) -> str:
        """The heartbeat's outcome; when it went through, a refusal any client's write met
        since the last probe (a large write may need room the one page did not)."""
        state = await self._heartbeat()
        seen, self._refusals_seen = self._refusals_seen, self._db.refusals
        if state != OK or self._db.refusals == seen:
            return state
        return FULL if isinstance(self._db.refused, space.DiskFull) else NOT_WRITABLE

    async def _heartbeat(self) -> str:
        try:
            await asyncio.wait_for(self._db.write(heartbeat), WRITER_SECONDS)
        except TimeoutError:
            return STALLED
        except space.DiskFull:
            return FULL
        except space.NotWritable:
            return NOT_WRITABLE
        except Exception:
            return "unavailable"
        return OK


def _worse(before: dict[str, str], now: dict[str, str]) -> bool:
    """Whether a part is now in a failing state it was not in (a first reading that finds
    one failing included). A recovery, or a part `starting`, is not."""
    return any(v not in (OK, STARTING) and before.get(k) != v for k, v in now.items())


def _retrieved(check: asyncio.Future[None]) -> None:
    """Take a late check's outcome, so that its error is not reported as never retrieved."""
    if not check.cancelled():
        check.exception()


def _on_own_thread(check: Callable[[Path], None], folder: Path) -> asyncio.Future[None]:
    """`check(folder)` on a thread of its own, not the loop's default executor: a pool busy
    with other work (pictures decoded, files read) made the probe wait its turn and call
    a sound disk `stalled`. The probe measures the disk, so only the disk may delay it; a
    check that hangs holds just its own thread, and no second one starts while it does."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if done.done():
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def run() -> None:
        error: BaseException | None = None
        try:
            check(folder)
        except BaseException as exc:  # handed to the probe, which judges it
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed while the disk hung
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=run, name="edge-health-storage", daemon=True).start()
    return done
