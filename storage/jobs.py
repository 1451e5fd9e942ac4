"""Rollout jobs and their executions: the jobs, job_targets, job_executions and job_counts
tables (docs/jobs.md, migrations 0027 and 0034).

Every change of an execution's state is one conditional UPDATE (the state it leaves is in
its WHERE), so two writers never both move it; counts per state follow by trigger. What
the scheduler reads per tick goes through partial indexes over what is due (`waiting`,
`due`, `active`): never through the executions that are not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from storage.listing import Field, Scope, Table
from storage.records import Codec, Record
from storage.rows import Tx, insert, record, records, scalar, update_record

RUNNING = ("SCHEDULED", "IN_PROGRESS")
UNFINISHED = ("QUEUED", "IN_PROGRESS")
STATES = (
    "QUEUED",
    "IN_PROGRESS",
    "SUCCEEDED",
    "FAILED",
    "REJECTED",
    "TIMED_OUT",
    "CANCELED",
    "REMOVED",
)
_UNFINISHED = "state IN ('QUEUED', 'IN_PROGRESS')"


@dataclass(frozen=True, slots=True)
class Job(Record):
    id: str
    org_id: str
    project_id: str | None
    description: str
    document: dict[str, Any]
    targets: dict[str, Any]
    target_group_id: str | None
    target_project_id: str | None
    target_tags: list[str] | None
    continuous: bool
    artifact_group_id: str | None
    artifact_path: str | None
    artifact_etag: str | None
    artifact_size: int | None
    artifact_sha256: str | None
    policy: dict[str, Any]
    state: str
    reason: str | None
    window_start: str
    window_released: int
    created_date: str
    created_by: str
    last_updated_date: str
    completed_date: str | None
    target_limit: int | None  # the most executions a continuous job takes (migration 0030)
    reaches_admins: bool  # made by an org admin: admin devices that join get it too


@dataclass(frozen=True, slots=True)
class JobCore(Record):
    """A job without what was asked of its targets: what the scheduler, the notices and a
    device's view read. `targets` holds up to jobs_max_targets device IDs, which those
    paths never need, so they never read nor decode it (it is not even in the jobs row:
    migration 0034)."""

    id: str
    org_id: str
    project_id: str | None
    document: dict[str, Any]
    continuous: bool
    artifact_group_id: str | None
    artifact_path: str | None
    artifact_etag: str | None
    artifact_size: int | None
    artifact_sha256: str | None
    policy: dict[str, Any]
    state: str
    window_start: str
    window_released: int
    created_by: str
    reaches_admins: bool  # else an org-admin device is never released the job (`waiting`)


@dataclass(frozen=True, slots=True)
class Execution(Record):
    job_id: str
    device_id: str
    org_id: str
    state: str
    removed_from: str | None
    released: bool
    status_details: dict[str, Any]
    progress: int
    version: int
    attempts: int
    queued_date: str
    ready_date: str
    released_date: str | None
    started_date: str | None
    last_updated_date: str
    finished_date: str | None
    deadline: str | None
    id: str  # the device's ID (a generated column, for the list engine)


JOBS = Codec(Job, "jobs")
# `targets` is kept in its own table (migration 0034), so that the jobs row, which the
# scheduler reads and writes on every tick, stays small: a job reads as one row anyway.
JOBS.select = JOBS.select.replace(
    "jobs.targets", "(SELECT targets FROM job_targets WHERE job_targets.job_id = jobs.id)"
)
CORES = Codec(JobCore, "jobs")
EXECUTIONS = Codec(Execution, "job_executions")


def _fields(table: str, names: dict[str, str]) -> dict[str, Field]:
    return {
        name: Field(kind, f"{table}.{name}", kind != "json", not_null=name in ("id",))
        for name, kind in names.items()
    }


LIST = Table(
    "jobs",
    _fields(
        "jobs",
        {
            "id": "id",
            "project_id": "id",
            "description": "text",
            "state": "text",
            "continuous": "bool",
            "created_date": "datetime",
            "created_by": "id",
            "last_updated_date": "datetime",
            "completed_date": "datetime",
        },
    ),
    codec=JOBS,
    fts="jobs_fts",  # a job's one text: its description (migration 0036)
    fts_columns=("description",),
)
EXECUTION_LIST = Table(
    "job_executions",
    _fields(
        "job_executions",
        {
            "id": "id",
            "device_id": "id",
            "state": "text",
            "progress": "number",
            "version": "number",
            "attempts": "number",
            "queued_date": "datetime",
            "started_date": "datetime",
            "last_updated_date": "datetime",
            "finished_date": "datetime",
        },
    ),
    codec=EXECUTIONS,
)
# A device's executions, one per job: the job's ID names a row (in the record's `id` and
# the continuation key), since every row's own `id` is the same device's.
BY_DEVICE = Codec(Execution, "job_executions")
BY_DEVICE.select = BY_DEVICE.select.removesuffix("job_executions.id") + "job_executions.job_id"
DEVICE_EXECUTION_LIST = Table(
    "job_executions",
    {
        **{n: f for n, f in EXECUTION_LIST.fields.items() if n not in ("id", "device_id")},
        "job_id": Field("id", "job_executions.job_id", not_null=True),
    },
    codec=BY_DEVICE,
    key="job_executions.job_id",
)


@dataclass(frozen=True, slots=True)
class JobName(Record):
    """What a device's list of executions shows of each job."""

    id: str
    description: str
    state: str


NAMES = Codec(JobName, "jobs")


# -- jobs ----------------------------------------------------------------------------------
def create(conn: Tx, job: Job) -> None:
    row = JOBS.encode(job)
    targets = row.pop("targets")
    insert(conn, JOBS.table, row)
    conn.execute("INSERT INTO job_targets (job_id, targets) VALUES (?, ?)", (job.id, targets))
    conn.executemany(
        "INSERT INTO job_counts (job_id, state, n) VALUES (?, ?, 0)",
        [(job.id, state) for state in STATES],
    )


def get(conn: Tx, job_id: str) -> Job | None:
    return record(conn, JOBS, "id = ?", (job_id,))


def core(conn: Tx, job_id: str) -> JobCore | None:
    """The job without its targets (the scheduler's, the notices' and a device's read)."""
    return record(conn, CORES, "id = ?", (job_id,))


def update(conn: Tx, job_id: str, changes: dict[str, Any]) -> bool:
    return update_record(conn, JOBS, job_id, changes)


def finish(conn: Tx, job_id: str, state: str, reason: str | None, now: str) -> bool:
    """Move a running job to `state` (COMPLETED, CANCELED, ABORTED); False if it ended."""
    conn.execute(
        "UPDATE jobs SET state = ?, reason = ?, completed_date = ?, last_updated_date = ?"
        " WHERE id = ? AND state IN ('SCHEDULED', 'IN_PROGRESS')",
        (state, reason, now, now, job_id),
    )
    return conn.changes() == 1


def delete(conn: Tx, job_id: str) -> bool:
    conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
    return conn.changes() == 1


def running(conn: Tx, limit: int) -> list[JobCore]:
    """The next `limit` running jobs after the scheduler's cursor, in ID order, starting
    over from the first when the end is reached; the cursor moves past them."""
    cursor = str(scalar(conn, "SELECT cursor FROM job_scheduler WHERE id = 1") or "")
    sql = (  # in ID order by the partial index: never a sort of every running job
        f"SELECT {CORES.select} FROM jobs INDEXED BY jobs_running_by_id"
        " WHERE state IN ('SCHEDULED', 'IN_PROGRESS') AND id > ? ORDER BY id LIMIT ?"
    )
    found = records(conn, CORES, sql, (cursor, limit))
    if len(found) < limit and cursor:  # the end: on from the first, up to the cursor
        more = records(conn, CORES, sql, ("", limit - len(found)))
        found += [j for j in more if j.id <= cursor]
    last = found[-1].id if found else ""
    if last != cursor:
        conn.execute("UPDATE job_scheduler SET cursor = ? WHERE id = 1", (last,))
    return found


@dataclass(frozen=True, slots=True)
class Running:
    """How many of an org's jobs run: all of them, one maker's, one project's."""

    org: int
    maker: int
    project: int


def running_in_org(conn: Tx, org_id: str, maker: str, project_id: str | None) -> Running:
    """The org's running jobs counted, in one pass over its running jobs (the partial index
    of migration 0030: at most jobs_max_running rows, whatever the org keeps)."""
    org, mine, project = next(
        conn.execute(
            "SELECT count(*), total(created_by = ?), total(project_id = ?) FROM jobs"
            " INDEXED BY jobs_running_by_org"
            " WHERE org_id = ? AND state IN ('SCHEDULED', 'IN_PROGRESS')",
            (maker, project_id, org_id),
        )
    )
    return Running(int(org), int(mine), int(project))


_ENDED_BEFORE = (  # the oldest ended jobs past the cutoff (the partial index of 0037)
    "SELECT id FROM jobs INDEXED BY jobs_ended WHERE state IN ('COMPLETED', 'CANCELED',"
    " 'ABORTED') AND completed_date < :before ORDER BY completed_date LIMIT :jobs"
)


def purge_ended(conn: Tx, before: str, jobs: int, executions: int) -> int:
    """One batch of the retention sweep: up to `executions` executions of the `jobs`
    oldest jobs ended before `before`, then those of these jobs left with none; how many
    rows went (0: nothing is left to purge). A job over 10,000 devices goes over several
    batches, so no transaction holds the writer long."""
    values = {"before": before, "jobs": jobs, "executions": executions}
    conn.execute(
        "DELETE FROM job_executions WHERE rowid IN (SELECT rowid FROM job_executions"
        f" WHERE job_id IN ({_ENDED_BEFORE}) LIMIT :executions)",
        values,
    )
    gone = conn.changes()
    conn.execute(
        f"DELETE FROM jobs WHERE id IN ({_ENDED_BEFORE}) AND NOT EXISTS"
        " (SELECT 1 FROM job_executions WHERE job_executions.job_id = jobs.id)",
        values,
    )
    return gone + conn.changes()


def counts(conn: Tx, job_id: str) -> dict[str, int]:
    rows = conn.execute("SELECT state, n FROM job_counts WHERE job_id = ?", (job_id,))
    return {str(state): int(n) for state, n in rows}


def counts_of(conn: Tx, job_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """The counts of each of these jobs (a page of a list), in one read of the counts'
    primary key."""
    found: dict[str, dict[str, int]] = {job_id: {} for job_id in job_ids}
    marks = ", ".join("?" for _ in job_ids) or "NULL"
    rows = conn.execute(
        f"SELECT job_id, state, n FROM job_counts WHERE job_id IN ({marks})", tuple(job_ids)
    )
    for job_id, state, n in rows:
        found[str(job_id)][str(state)] = int(n)
    return found


def visible(org_id: str, project_ids: Sequence[str] | None, actor: str) -> Scope:
    """The jobs a caller may list: the org's (`project_ids` None), or those of these
    projects and those the caller created."""
    if project_ids is None:
        return Scope("jobs.org_id = ?", (org_id,))
    marks = ", ".join("?" for _ in project_ids) or "NULL"
    where = f"jobs.org_id = ? AND (jobs.project_id IN ({marks}) OR jobs.created_by = ?)"
    return Scope(where, (org_id, *project_ids, actor))


def of_job(job_id: str) -> Scope:
    return Scope("job_executions.job_id = ?", (job_id,))


def of_device_in(device_id: str, jobs: Scope) -> Scope:
    """A device's executions of the jobs in `jobs` (a `visible` scope)."""
    where = f"job_executions.job_id IN (SELECT jobs.id FROM jobs WHERE {jobs.sql})"
    return Scope("job_executions.device_id = ?", (device_id,)) & Scope(where, jobs.params)


def names(conn: Tx, job_ids: Sequence[str]) -> dict[str, JobName]:
    """The named jobs' IDs, descriptions and states, by ID (those that still exist)."""
    marks = ", ".join("?" for _ in job_ids) or "NULL"
    sql = f"SELECT {NAMES.select} FROM jobs WHERE id IN ({marks})"
    return {j.id: j for j in records(conn, NAMES, sql, tuple(job_ids))}


# -- executions ----------------------------------------------------------------------------
def add_executions(conn: Tx, job: Job, device_ids: Sequence[str], now: str) -> None:
    """A QUEUED execution of the job for each device (one already there is left as it
    is), in one statement: the device IDs go in as one JSON array, not a row each."""
    ids = json.dumps(list(device_ids))
    conn.execute(_ADD, {"job": job.id, "org": job.org_id, "now": now, "ids": ids})


_ADD = (  # a fresh execution's columns, in the list's order (json_each keeps it)
    "INSERT OR IGNORE INTO job_executions (job_id, device_id, org_id, state, released,"
    " status_details, progress, version, attempts, queued_date, ready_date, last_updated_date)"
    " SELECT :job, value, :org, 'QUEUED', 0, '{}', 0, 1, 0, :now, :now, :now"
    " FROM json_each(:ids) ORDER BY key"
)


def execution(conn: Tx, job_id: str, device_id: str) -> Execution | None:
    return record(conn, EXECUTIONS, "job_id = ? AND device_id = ?", (job_id, device_id))


def next_released(conn: Tx, device_id: str) -> Execution | None:
    """The device's next execution (what notify-next tells): of its released, unfinished
    ones, the first released (then queued, then by job). A device has one or two of those
    at most, so they are read unordered and the first picked here: SQLite's sorter cost a
    read three times its lookup, and each device's update and release makes this read."""
    sql = (
        f"SELECT {EXECUTIONS.select} FROM job_executions"
        f" WHERE device_id = ? AND {_UNFINISHED} AND released = 1"
    )
    pending = records(conn, EXECUTIONS, sql, (device_id,))
    return min(pending, key=_queue_place, default=None)


def _queue_place(execution: Execution) -> tuple[str, str, str]:
    return execution.released_date or "", execution.queued_date, execution.job_id


def of_device(conn: Tx, device_id: str, released_only: bool) -> list[Execution]:
    """A device's unfinished executions, oldest first (what it has to do)."""
    where = f"device_id = ? AND {_UNFINISHED}" + (" AND released = 1" if released_only else "")
    sql = (
        f"SELECT {EXECUTIONS.select} FROM job_executions WHERE {where}"
        " ORDER BY released_date, queued_date, job_id"
    )
    return records(conn, EXECUTIONS, sql, (device_id,))


@dataclass(frozen=True, slots=True)
class Waiting:
    """A queued execution's device, next to be released, and whether the job may not
    reach it: it is an org admin now and the job's maker was not one."""

    device_id: str
    out_of_reach: bool


def waiting(conn: Tx, job: JobCore, limit: int) -> list[Waiting]:
    """The devices of the next `limit` executions to release, in queue order. For a job
    whose maker was not an org admin each is asked, now, whether it is an org admin
    (`org_admin_accounts`, migration 0039), which no one else may update: its access may
    have come after it joined, or it was made one since. The question is an index lookup
    per device asked, never per device queued."""
    rows = conn.execute(
        "SELECT device_id, CASE WHEN :reaches THEN 0 ELSE EXISTS (SELECT 1 FROM"
        " org_admin_accounts v WHERE v.id = job_executions.device_id) END FROM job_executions"
        " WHERE job_id = :job AND state = 'QUEUED' AND released = 0 ORDER BY ready_date"
        " LIMIT :limit",
        {"reaches": job.reaches_admins, "job": job.id, "limit": limit},
    )
    return [Waiting(str(device), bool(out)) for device, out in rows]


def refuse(conn: Tx, job_id: str, device_id: str, reason: str, now: str) -> bool:
    """End a queued execution the job may not reach as REMOVED, with `reason` in its
    status_details, before its device ever saw it; False if it was no longer waiting."""
    details = EXECUTIONS.changes({"status_details": {"reason": reason}})["status_details"]
    sets = "state = 'REMOVED', status_details = ?, finished_date = ?, version = version + 1"
    return _from_waiting(conn, job_id, device_id, sets, (details, now), now)


def active(conn: Tx, job_id: str) -> int:
    """Released and unfinished executions of the job (at most its max in progress)."""
    sql = f"SELECT count(*) FROM job_executions WHERE job_id = ? AND released = 1 AND {_UNFINISHED}"
    return int(scalar(conn, sql, (job_id,)))


def release(conn: Tx, job_id: str, device_id: str, now: str, deadline: str) -> bool:
    sets = "released = 1, released_date = ?, deadline = ?"
    return _from_waiting(conn, job_id, device_id, sets, (now, deadline), now)


def _from_waiting(
    conn: Tx, job_id: str, device_id: str, sets: str, values: tuple[str, ...], now: str
) -> bool:
    """Change a queued execution not yet released, only if it still is one (its state
    and `released` are in the WHERE): False when another writer moved it first."""
    conn.execute(
        f"UPDATE job_executions SET {sets}, last_updated_date = ? WHERE job_id = ?"
        " AND device_id = ? AND state = 'QUEUED' AND released = 0",
        (*values, now, job_id, device_id),
    )
    return conn.changes() == 1


def due(conn: Tx, now: str, limit: int) -> list[Execution]:
    """Released executions past their deadline, earliest first."""
    sql = (
        f"SELECT {EXECUTIONS.select} FROM job_executions WHERE released = 1"
        f" AND {_UNFINISHED} AND deadline <= ? ORDER BY deadline LIMIT ?"
    )
    return records(conn, EXECUTIONS, sql, (now, limit))


def move(conn: Tx, before: Execution, changes: dict[str, Any]) -> Execution | None:
    """Change an execution as read (`before`): only if it is still at that version, so a
    concurrent change wins and this one is a no-op (None). The version grows by one.
    Returns the execution as it now is, built from `before` and the changes rather than
    read again (no trigger changes an execution's own row): a device's update is two
    moves, and each read more is CPU per execution."""
    after = {**changes, "version": before.version + 1}
    values = EXECUTIONS.changes(after)
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    conn.execute(
        f"UPDATE job_executions SET {assignments} WHERE job_id = :__job"
        " AND device_id = :__device AND version = :__version",
        {
            **values,
            "__job": before.job_id,
            "__device": before.device_id,
            "__version": before.version,
        },
    )
    return replace(before, **after) if conn.changes() == 1 else None


def end_unfinished(
    conn: Tx, job_id: str, states: Sequence[str], to: str, details: dict[str, Any], now: str
) -> list[str]:
    """Move every execution of the job in `states` to `to`; the devices of those that
    had been released (offered to their device: the others were never its to know of)."""
    marks = ", ".join("?" for _ in states)
    rows = conn.execute(
        f"UPDATE job_executions SET state = ?, status_details = ?, finished_date = ?,"
        f" last_updated_date = ?, version = version + 1, deadline = NULL"
        f" WHERE job_id = ? AND state IN ({marks}) RETURNING device_id, released",
        (
            to,
            EXECUTIONS.changes({"status_details": details})["status_details"],
            now,
            now,
            job_id,
            *states,
        ),
    )
    return [str(device) for device, released in list(rows) if released]


def released_devices(conn: Tx, job_id: str) -> list[str]:
    """Devices with a released unfinished execution of the job (to tell them it ended)."""
    rows = conn.execute(
        f"SELECT device_id FROM job_executions WHERE job_id = ? AND released = 1 AND {_UNFINISHED}",
        (job_id,),
    )
    return [str(r[0]) for r in rows]


# -- who a job targets ---------------------------------------------------------------------
def group_devices(conn: Tx, group_id: str) -> list[str]:
    """The devices that are members of the group: hold active access to it (an inactive
    access grants nothing, docs/groups-and-roles.md, so it is no membership either)."""
    rows = conn.execute(
        "SELECT access.grantee_id FROM access JOIN devices ON devices.id = access.grantee_id"
        " WHERE access.target_id = ? AND access.kind = 'group' AND access.is_active = 1"
        " AND access.grantee_kind = 'device' ORDER BY access.created_date, access.id",
        (group_id,),
    )
    return [str(r[0]) for r in rows]


def project_devices(conn: Tx, org_id: str, project_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM devices WHERE org_id = ? AND project_id = ? ORDER BY created_date, id",
        (org_id, project_id),
    )
    return [str(r[0]) for r in rows]


def outside_project(conn: Tx, device_ids: Sequence[str], project_id: str) -> int:
    """How many of the devices are not devices of the project (unknown IDs count too)."""
    sql = (
        "SELECT count(*) FROM json_each(?) AS asked LEFT JOIN devices"
        " ON devices.id = asked.value AND devices.project_id = ? WHERE devices.id IS NULL"
    )
    return int(scalar(conn, sql, (json.dumps(list(device_ids)), project_id)))


def tagged_devices(conn: Tx, org_id: str, project_id: str | None, tags: Sequence[str]) -> list[str]:
    """Devices of the org (of the project, when given) holding any of the tags."""
    marks = ", ".join("?" for _ in tags)
    where = "org_id = ?" + (" AND project_id = ?" if project_id else "")
    params = (org_id, project_id) if project_id else (org_id,)
    rows = conn.execute(
        f"SELECT id FROM devices WHERE {where} AND EXISTS (SELECT 1 FROM json_each(devices.tags)"
        f" WHERE value IN ({marks})) ORDER BY created_date, id",
        (*params, *tags),
    )
    return [str(r[0]) for r in rows]


def in_project(project_id: str) -> Scope:
    """The jobs of one project: a project session's lists show no other project's jobs
    and no org-level one."""
    return Scope("jobs.project_id = ?", (project_id,))


def existing_targets(conn: Tx, job_id: str) -> list[str]:
    """The devices that have an execution of the job and still exist (a device in the
    trash, or deleted, is no longer one to have rights over)."""
    sql = (
        "SELECT job_executions.device_id FROM job_executions JOIN devices"
        " ON devices.id = job_executions.device_id WHERE job_executions.job_id = ?"
    )
    return [str(r[0]) for r in conn.execute(sql, (job_id,))]
