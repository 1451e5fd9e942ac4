"""A job and an execution as HTTP and MQTT show them (docs/jobs.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from edge.jobs.rules import ARTIFACT
from storage.jobs import STATES, Execution, Job, JobCore, JobName

EXECUTION_STATES = STATES

Row = dict[str, Any]
# The artifact's download URL for a job's execution, or None (edge/jobs/artifacts.py).
UrlOf = Callable[[JobCore, Execution], str | None]
_OPTIONAL = ("released_date", "started_date", "finished_date", "deadline")


def job(found: Job, counts: dict[str, int] | None = None) -> Row:
    out: Row = {
        "id": found.id,
        "org_id": found.org_id,
        "description": found.description,
        "document": found.document,
        "targets": found.targets,
        "continuous": found.continuous,
        "policy": found.policy,
        "state": found.state,
        "created_date": found.created_date,
        "created_by": found.created_by,
        "last_updated_date": found.last_updated_date,
    }
    for name in ("project_id", "reason", "completed_date"):
        if found[name] is not None:
            out[name] = found[name]
    if found.artifact_group_id is not None:
        out["artifact"] = _artifact(found)
    if counts is not None:
        out["counts"] = {state: counts.get(state, 0) for state in STATES}
    return out


def _artifact(found: Job) -> Row:
    return {
        "group_id": found.artifact_group_id,
        "path": found.artifact_path,
        "etag": found.artifact_etag,
        "size": found.artifact_size,
        "sha256": found.artifact_sha256,
    }


def execution(found: Execution) -> Row:
    out: Row = {
        "job_id": found.job_id,
        "device_id": found.device_id,
        "state": found.state,
        "status_details": found.status_details,
        "progress": found.progress,
        "version": found.version,
        "attempts": found.attempts,
        "queued_date": found.queued_date,
        "last_updated_date": found.last_updated_date,
    }
    for name in _OPTIONAL:
        if found[name] is not None:
            out[name] = found[name]
    return out


def of_device(found: Execution, of: JobName | None) -> Row:
    """An execution in a device's list, with what names its job (None: just deleted)."""
    out = execution(found)
    if of is not None:
        out["job_description"], out["job_state"] = of.description, of.state
    return out


def for_device(found: Execution, of: JobCore, url_of: UrlOf) -> Row:
    """What the device gets: its execution and the job's document, with the artifact's
    size, SHA-256 and ETag under `document.artifact` when the job has one, and its URL
    while the execution is released and unfinished."""
    document = dict(of.document)
    if of.artifact_group_id is not None:
        artifact: Row = {
            "size": of.artifact_size,
            "sha256": of.artifact_sha256,
            "etag": of.artifact_etag,
        }
        url = url_of(of, found)
        if url is not None:
            artifact["url"] = url
        document[ARTIFACT] = artifact
    return {**execution(found), "document": document}


def summary(found: Execution) -> Row:
    """A device's pending execution in a list (`jobs/get`, `GET .../jobs`)."""
    return {
        "job_id": found.job_id,
        "state": found.state,
        "version": found.version,
        "queued_date": found.queued_date,
        "last_updated_date": found.last_updated_date,
    }
