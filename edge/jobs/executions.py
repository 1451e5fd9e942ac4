"""A device's own executions (docs/jobs.md, "Devices"): what it has to do, one execution
with its document, and its updates, the same over HTTP (its API key) and over MQTT (its
own sessions, edge/jobs/inbox.py).

An execution the scheduler has not released yet is not the device's to see (404). An
update names the state the device moves it to (`IN_PROGRESS`, `SUCCEEDED`, `FAILED`,
`REJECTED`), optionally `status_details`, `progress` (0-100; a SUCCEEDED execution is at
100, so with SUCCEEDED only 100 is accepted) and `expected_version`: a
version that is not the current one is a 409 that carries the current `version`, as is
an update of an execution that has ended. The update, the job's counts and what follows
for the job (retry, abort, completion: edge/jobs/progress.py) are one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from edge.accounts.devices import Devices
from edge.jobs import progress, views
from edge.jobs.notices import Known, Notices, Told
from edge.kernel import clock, fields, json_text
from edge.kernel.errors import Conflict, Denied, NotFound, SchemaError, ValidationError
from edge.kernel.principal import Principal
from storage import devices as device_store
from storage import jobs as store
from storage.database import Database
from storage.devices import Placement
from storage.jobs import Execution, JobCore
from storage.records import Device
from storage.rows import Tx

Row = dict[str, Any]
DEVICE_STATES = ("IN_PROGRESS", "SUCCEEDED", "FAILED", "REJECTED")
UPDATE_FIELDS = frozenset(
    {"state", "status_details", "progress", "expected_version", "client_token"}
)
MAX_DETAILS_BYTES = 4096


class DeviceJobs:
    def __init__(self, db: Database, devices: Devices, notices: Notices) -> None:
        self._db = db
        self._devices = devices
        self._notices = notices

    # -- over HTTP, with the device's API key ------------------------------------------------
    def own(self, principal: Principal, device_id: str) -> Device:
        """The device, when the caller is that device; 403 for others who see it."""
        target = self._devices.target(principal, device_id)
        if not target.rel.is_self:
            if not target.rel.read:
                raise NotFound("Device not found")
            raise Denied("A device's jobs are its own: see GET /v2/jobs/{job_id}/executions")
        return target.account

    # -- for both: the device by its ID, checked active in the same transaction ------------
    def pending(self, device_id: str) -> Row:
        def read(conn: Tx) -> list[Execution]:
            _active(conn, device_id)
            return store.of_device(conn, device_id, released_only=True)

        return {"jobs": [views.summary(e) for e in self._db.read(read)]}

    def get(self, device_id: str, job_id: str) -> Row:
        def both(conn: Tx) -> tuple[Execution, JobCore]:
            _active(conn, device_id)
            return _released(conn, job_id, device_id)

        execution, job = self._db.read(both)
        return views.for_device(execution, job, self._notices.url_of)

    async def update(self, device_id: str, job_id: str, body: Mapping[str, Any]) -> Row:
        """Apply the device's update; what it changes for the device's next job and for
        the job's progress is read in the same write and told after its commit."""
        change = parse_update(body)
        now = clock.now_iso()

        def write(conn: Tx) -> tuple[Execution, JobCore, Told]:
            device = _active(conn, device_id)
            before, job = _released(conn, job_id, device_id)
            execution = _apply(conn, before, job, change, now)
            counts = store.counts(conn, job_id)  # after the move: settled and told
            changes = progress.Changes()
            if change["state"] != "IN_PROGRESS":  # ended (or queued again to retry)
                changes = progress.follow(conn, job, counts, now)
                changes.reported.add(device_id)
            # What this transaction read and left as it was is not read again.
            known = Known({device_id: device})
            if job.id not in changes.jobs:
                known.jobs[job.id], known.counts[job.id] = job, counts
            changes.jobs.add(job.id)
            return execution, job, self._notices.gather(conn, changes, known)

        execution, job, told = await self._db.write(write)
        await self._notices.send(told)
        return views.for_device(execution, job, self._notices.url_of)


def _active(conn: Tx, device_id: str) -> Placement:
    """A device deleted or suspended since it signed in has no jobs to see or update."""
    device = device_store.placement(conn, device_id)
    if device is None or not device.is_active:
        raise NotFound("Device not found")
    return device


def parse_update(body: Mapping[str, Any]) -> Row:
    unknown = sorted(set(body) - UPDATE_FIELDS)
    if unknown:
        raise SchemaError(f"{unknown[0]}: is not a field of an execution update")
    if body.get("state") not in DEVICE_STATES:
        raise ValidationError("state", f"must be one of {', '.join(DEVICE_STATES)}")
    change: Row = {"state": body["state"]}
    if "status_details" in body:
        details = fields.mapping("status_details", body["status_details"])
        json_text.check(details, field="status_details")
        if len(json.dumps(details).encode()) > MAX_DETAILS_BYTES:
            raise ValidationError("status_details", f"must be at most {MAX_DETAILS_BYTES} bytes")
        change["status_details"] = details
    if "progress" in body:
        change["progress"] = fields.integer("progress", body["progress"], 0, 100)
        if change["state"] == "SUCCEEDED" and change["progress"] != 100:
            raise ValidationError("progress", "a SUCCEEDED execution is at 100")
    if body.get("expected_version") is not None:
        change["expected_version"] = fields.integer(
            "expected_version", body["expected_version"], 1, 2**62
        )
    token = body.get("client_token")
    if token is not None and (not isinstance(token, str) or len(token) > 64):
        raise ValidationError("client_token", "must be a string of at most 64 characters")
    return change


def _released(conn: Tx, job_id: str, device_id: str) -> tuple[Execution, JobCore]:
    execution = store.execution(conn, job_id, device_id)
    job = store.core(conn, job_id)
    if execution is None or job is None or (execution.state == "QUEUED" and not execution.released):
        raise NotFound("Job execution not found")
    return execution, job


def _apply(conn: Tx, before: Execution, job: JobCore, change: Row, now: str) -> Execution:
    """The execution moved as the device asks (a 409 when it is not at the version the
    device expects, has ended, or another writer moved it first)."""
    expected = change.get("expected_version")
    current = {"version": before.version}
    if expected is not None and expected != before.version:
        raise Conflict(
            f"version: the execution is at version {before.version}, not {expected}",
            extension=current,
        )
    if before.state not in store.UNFINISHED:
        raise Conflict(f"The execution has ended ({before.state})", extension=current)
    details = change.get("status_details", before.status_details)
    state = change["state"]
    if state == "IN_PROGRESS":
        moved = {
            "state": state,
            "status_details": details,
            "progress": change.get("progress", before.progress),
            "started_date": before.started_date or now,
            "last_updated_date": now,
        }
        after = store.move(conn, before, moved)
    else:
        after = progress.end(conn, job, before, state, details, now, change.get("progress"))
    if after is None:
        raise Conflict("The execution changed meanwhile: try again", extension=current)
    return after
