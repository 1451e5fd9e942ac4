"""Jobs, from the device's side (docs/jobs.md, docs/agent.md): each released execution is
taken in turn, moved `IN_PROGRESS`, its artifact downloaded (resumed across breaks and
restarts, `download.py`) and checked against its SHA-256, the job's handler run with the
document on its standard input and the artifact's path in `EDGE_JOB_ARTIFACT`, and its
outcome reported, with the progress along the way.

- `jobs/notify-next` (and every connection) wakes the worker, which reads its work over
  HTTP with the API key (`GET /v2/devices/{id}/jobs`, `GET`/`PATCH .../jobs/{job_id}`):
  requests with answers, so a refusal is known at once and a conflict is read again.
- Every update carries the execution's `version` (`expected_version`); a 409 means it
  changed: the execution is read again, and the update sent again unless it has ended.
- The outcome is written to the state folder (`job_records.py`) before it is sent, and
  sent again after a restart, a reconnection or a failed attempt until the server takes
  it, or ended the execution itself (cancelled, timed out): then it is dropped, said so.
- A handler is never started twice for one attempt of an execution: its start is
  recorded first, and an agent that finds the start and no outcome (it was killed while
  the handler ran) reports `FAILED` (`reason`: `interrupted`) rather than run it again,
  unless `jobs.idempotent` says the handler may run again (then it does).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

import aiohttp

from edge_agent import download, handler
from edge_agent.backoff import Backoff
from edge_agent.job_records import JobRecords
from edge_agent.link import Link, Message, say
from edge_agent.server_api import ServerApi, tls
from edge_agent.settings import JobSettings, Settings

Json = dict[str, Any]
ENDED = {"SUCCEEDED", "FAILED", "REJECTED", "TIMED_OUT", "CANCELED", "REMOVED"}
RETRIES = 5  # conflicts in a row before the update is left for the next round
STEP = 10  # the download's progress is reported every this many percent
MAX_MESSAGE = 1000  # characters of a failure's message in status_details (4 KiB at most)


class TryLater(Exception):
    """The server did not take the request now (down, busy, or the execution kept
    changing): the round is tried again after a wait."""


class Jobs:
    name = "jobs"

    def __init__(self, settings: Settings, jobs: JobSettings, link: Link) -> None:
        assert settings.state_dir is not None
        self.settings = settings
        self.jobs = jobs
        self.link = link
        self.api = ServerApi(settings)
        self.records = JobRecords(settings.state_dir)
        self._path = f"/v2/devices/{settings.device_id}/jobs"
        self._wake = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._backoff = Backoff(settings.reconnect_min, settings.reconnect_max)
        self._latest: Json = {}  # the execution being worked on, as the server last said
        self._next_step = 0

    def filters(self) -> list[str]:
        return [f"{self.settings.namespace}/jobs/notify-next"]

    async def connected(self) -> None:
        self._wake.set()
        if self._worker is None:
            self._worker = asyncio.create_task(self._work())

    async def handle(self, message: Message) -> None:
        self._wake.set()  # a notice is a hint: the worker reads its work from the server
        self.link.ack(message)

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        await self.api.close()

    async def _work(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._round()
            except Exception as failed:  # the worker lives on: its work is all kept
                say(f"jobs: {failed!r}; trying again")
                await asyncio.sleep(self._backoff.next_wait())
                self._wake.set()
            else:
                self._backoff.succeeded()

    async def _round(self) -> None:
        """The outcomes kept from before first, then each released execution in turn."""
        for kept, record in self.records.with_outcomes():
            await self._report(kept, record)
        seen: set[str] = set()
        while (job_id := await self._next(seen)) is not None:
            seen.add(job_id)
            await self._take(job_id)

    async def _next(self, seen: set[str]) -> str | None:
        status, body = await self.api.call("GET", self._path)
        if status != 200:
            raise TryLater(f"listing its jobs: {status} {body.get('message', '')}")
        pending = [str(e.get("job_id")) for e in body.get("jobs", []) if isinstance(e, dict)]
        return next((job_id for job_id in pending if job_id not in seen), None)

    async def _take(self, job_id: str) -> None:
        execution = await self._get(job_id)
        if execution is None or execution.get("state") in ENDED:
            return
        attempt = execution.get("attempts", 0)
        record = self.records.read(job_id)
        if record.get("attempts") == attempt and record.get("handler_started"):
            if not self.jobs.idempotent:
                await self._finish(job_id, attempt, interrupted())
                return
        started = await self._update(job_id, execution, {"state": "IN_PROGRESS"})
        if started is not None:
            print(f"job {job_id}: started", flush=True)
            await self._finish(job_id, attempt, await self._perform(job_id, started))

    async def _finish(self, job_id: str, attempt: int, outcome: Json) -> None:
        record = {"attempts": attempt, "outcome": outcome}
        self.records.write(job_id, record)  # kept before it is sent: never lost
        await self._report(job_id, record)

    async def _perform(self, job_id: str, execution: Json) -> Json:
        self._latest = execution
        document = execution.get("document")
        document = document if isinstance(document, dict) else {}
        env = {"EDGE_JOB_ID": job_id}
        artifact = document.get("artifact")
        if isinstance(artifact, dict):
            refused = await self._download(job_id, artifact)
            if refused is not None:
                return refused
            env["EDGE_JOB_ARTIFACT"] = str(self.records.artifact(job_id))
        self.records.write(
            job_id, {"attempts": execution.get("attempts", 0), "handler_started": True}
        )

        async def line(said: Json) -> None:
            if isinstance(said.get("progress"), int) and not isinstance(said["progress"], bool):
                details = said.get("status_details")
                details = details if isinstance(details, dict) else {}
                await self._progress(job_id, said["progress"], {"step": "handler", **details})

        result = await handler.run_lines(
            self.jobs.handler, document, self.jobs.timeout_seconds, env, line
        )
        return outcome(result)

    async def _download(self, job_id: str, artifact: Json) -> Json | None:
        """The artifact, whole and checked, at `records.artifact(job_id)`; or the outcome
        that says why not (a URL that refuses, a checksum that does not match)."""
        url, size, expected = artifact.get("url"), artifact.get("size"), artifact.get("sha256")
        if not isinstance(url, str) or not isinstance(size, int) or not isinstance(expected, str):
            return failed("bad_artifact", "the document's artifact lacks its url, size or sha256")
        whole = self.records.artifact(job_id)
        if not whole.exists():
            part = self.records.part(job_id)
            self._next_step = 0

            async def told(have: int) -> None:
                percent = have * 100 // size if size else 100
                if percent >= self._next_step:
                    self._next_step = percent // STEP * STEP + STEP
                    await self._progress(job_id, percent, {"step": "download", "bytes": have})

            while True:
                try:
                    await download.fetch(
                        self.api.session, url, part, size, tls(self.settings.ca_file), told
                    )
                    break
                except download.Refused as refused:
                    return failed("download_failed", str(refused))
                except (aiohttp.ClientError, OSError, TimeoutError) as broken:
                    say(f"job {job_id}: the download broke ({broken!r}); resuming")
                    await asyncio.sleep(self._backoff.next_wait())
            os.replace(part, whole)
        got = await download.sha256(whole)
        if got != expected.lower():
            whole.unlink()
            say(f"job {job_id}: the artifact's SHA-256 is {got}, not {expected}; discarded")
            return failed("checksum_mismatch", f"expected SHA-256 {expected}, got {got}")
        print(f"job {job_id}: artifact verified", flush=True)
        return None

    async def _progress(self, job_id: str, percent: int, details: Json) -> None:
        """Progress is told when it can be: a server away does not hold the work up."""
        change = {"state": "IN_PROGRESS", "progress": max(0, min(percent, 100))}
        try:
            latest = await self._update(job_id, self._latest, {**change, "status_details": details})
        except (aiohttp.ClientError, OSError, TimeoutError, TryLater) as failed_now:
            say(f"job {job_id}: progress not told: {failed_now or type(failed_now).__name__}")
            return
        if latest is not None:
            self._latest = latest

    async def _report(self, job_id: str, record: Json) -> None:
        """Sends the kept outcome until the server takes it; forgets it then, or when the
        execution ended otherwise (or is another attempt) meanwhile."""
        sent: Json = record["outcome"]
        for _ in range(RETRIES):
            execution = await self._get(job_id)
            if execution is None or self._moved_on(job_id, execution, record):
                self.records.forget(job_id)
                return
            body = {**sent, "expected_version": execution.get("version")}
            status, answer = await self.api.call("PATCH", f"{self._path}/{job_id}", body)
            if status == 200:
                self.records.forget(job_id)
                print(f"job {job_id}: {sent['state']}", flush=True)
                return
            if status == 400:  # its details refused: the state alone, with why
                say(f"job {job_id}: the server refused the outcome: {answer.get('message', '')}")
                sent = failed_details(sent, str(answer.get("message", "")))
            elif status not in (404, 409):
                raise TryLater(f"job {job_id}: the outcome got {status}")
        raise TryLater(f"job {job_id}: the execution kept changing")

    def _moved_on(self, job_id: str, execution: Json, record: Json) -> bool:
        state = execution.get("state")
        if state not in ENDED and execution.get("attempts", 0) == record.get("attempts"):
            return False
        if state != record["outcome"]["state"]:
            say(f"job {job_id}: the server has it {state}; the outcome is dropped")
        return True

    async def _update(self, job_id: str, execution: Json, change: Json) -> Json | None:
        """The execution after `change`, sent with its version and sent again after a
        conflict; None when it ended (or went) meanwhile."""
        for _ in range(RETRIES):
            body = {**change, "expected_version": execution.get("version")}
            status, answer = await self.api.call("PATCH", f"{self._path}/{job_id}", body)
            if status == 200 and isinstance(answer.get("execution"), dict):
                return {**execution, **answer["execution"]}
            if status not in (404, 409):
                raise TryLater(f"job {job_id}: {status} {answer.get('message', '')}")
            fresh = await self._get(job_id)
            if fresh is None or fresh.get("state") in ENDED:
                return None
            execution = fresh
        raise TryLater(f"job {job_id}: the execution kept changing")

    async def _get(self, job_id: str) -> Json | None:
        """The execution with its document; None when it is not (or no longer) the device's."""
        status, body = await self.api.call("GET", f"{self._path}/{job_id}")
        if status == 404:
            return None
        if status != 200 or not isinstance(body.get("execution"), dict):
            raise TryLater(f"job {job_id}: reading it: {status} {body.get('message', '')}")
        return dict(body["execution"])


def outcome(result: handler.Result) -> Json:
    """The handler's result as an execution's outcome: exit code 0 is SUCCEEDED; a last
    line `{"state": "REJECTED"}` declines the job; anything else is FAILED. The last
    line's `status_details` (an object) goes with it."""
    said = result.answer or {}
    details = said.get("status_details")
    details = details if isinstance(details, dict) else {}
    if said.get("state") == "REJECTED":
        return {"state": "REJECTED", "status_details": details}
    if not result.failure:
        return {"state": "SUCCEEDED", "status_details": details, "progress": 100}
    return {
        "state": "FAILED",
        "status_details": {**details, **_why("handler_failed", result.failure)},
    }


def interrupted() -> Json:
    return failed("interrupted", "the agent stopped while the handler ran; not run again")


def failed(reason: str, message: str) -> Json:
    return {"state": "FAILED", "status_details": _why(reason, message)}


def failed_details(sent: Json, refusal: str) -> Json:
    return {"state": sent["state"], "status_details": _why("details_refused", refusal)}


def _why(reason: str, message: str) -> Json:
    return {"reason": reason, "message": message[:MAX_MESSAGE]}
