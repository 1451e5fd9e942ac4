"""Bulk requests: one `method` and a list of jobs, each naming paths (the SDK's
BulkDataBody; docs/data.md, "Bulk").

Writes (PUT, POST, PATCH, DELETE) are applied atomically: every path of every job in one
transaction, all or nothing; the first refusal (403, 404, 409, 400) undoes the rest and
names its path. A bulk GET answers `data_by_path`, shaped as the SDK reads it: for each
path the entry (DataSchema), the list of entries of a cascade, or, for `paths_only` and
counts, `{paths, object_count, last_evaluated_key}` (DataInfo). A path with no entry is
left out and listed in `missing_paths`, without failing the request; the continuation key
of a cascade page of entries is in `last_evaluated_key_by_path`.

The jobs of a GET share one `ReadBudget` (the scan cap, PAGE_BYTES, the pattern time): a
job that finds it spent answers as a page cut short does (edge/data/pages.py), and an
entry named alone whose value no longer fits is left out and listed in `unread_paths`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edge.data import paths, query, uploads
from edge.data.changes import DataChanged, operation
from edge.data.pages import ReadBudget
from edge.data.reads import Body, BudgetSpent, Reads
from edge.data.target import DataTarget, Targets
from edge.data.uploads import Upload
from edge.data.writes import EntryWrites, Stamp
from edge.kernel import clock
from edge.kernel.errors import ValidationError
from edge.kernel.events import Hook
from edge.kernel.principal import Principal
from storage import data as store
from storage.database import Database
from storage.rows import Tx

METHODS = ("GET", "PUT", "POST", "PATCH", "DELETE")
MAX_BULK_CASCADE = 10_000  # entries a bulk DELETE may take with its cascades


@dataclass(frozen=True)
class Job:
    paths: tuple[str, ...]
    upload: Upload | None = None
    cascade: bool = False


class Bulk:
    def __init__(
        self,
        db: Database,
        targets: Targets,
        reads: Reads,
        writes: EntryWrites,
        max_paths: int,
        changes: Hook[DataChanged],
    ) -> None:
        self._changes = changes
        self._db = db
        self._targets = targets
        self._reads = reads
        self._writes = writes
        self.max_paths = max_paths

    async def run(
        self, principal: Principal, group_id: str, method: str, jobs: Sequence[dict[str, Any]]
    ) -> Body | None:
        """`data_by_path` for a GET; None (success) for the writes."""
        method = method.upper()
        if method not in METHODS:
            raise ValidationError("method", f"must be one of {', '.join(METHODS)}")
        names = self._paths(jobs, allow_root=method in ("GET", "DELETE"))
        target = self._targets.open(principal, group_id, writing=method != "GET")
        if method == "GET":
            return await self._get(target, jobs, names)
        prepared = [self._job(method, job, found) for job, found in zip(jobs, names, strict=True)]
        stamp = (principal.actor, clock.now_iso())
        await self._db.write(lambda c: self._apply(c, target, method, prepared, stamp))
        self._tell(target, method, prepared)
        return None

    def _tell(self, target: DataTarget, method: str, jobs: list[Job]) -> None:
        """One change per path the request named, after its commit."""
        org_id, group_id = target.group.org_id, target.group_id
        for job in jobs:
            how = operation(method, cascade=job.cascade)
            for path in job.paths:
                self._changes.emit(DataChanged(org_id, group_id, path, how))

    def _paths(self, jobs: Sequence[dict[str, Any]], *, allow_root: bool) -> list[tuple[str, ...]]:
        if not jobs:
            raise ValidationError("jobs", "must hold at least one job")
        seen: set[str] = set()
        out = []
        for i, job in enumerate(jobs):
            field = f"jobs.{i}.paths"
            norm = paths.normalize if allow_root else paths.entry_path
            found = tuple(norm(raw, field) for raw in job["paths"])
            if not found:
                raise ValidationError(field, "must name at least one path")
            for path in found:
                if path in seen:
                    raise ValidationError(field, f"'{path}' is named twice in this request")
                seen.add(path)
            out.append(found)
        if len(seen) > self.max_paths:
            raise ValidationError("jobs", f"may name at most {self.max_paths} paths in all")
        return out

    def _job(self, method: str, body: dict[str, Any], found: tuple[str, ...]) -> Job:
        if method == "DELETE":
            return Job(found, cascade=query.flag("cascade", body.get("cascade", False)))
        partial = method == "PATCH"
        return Job(found, uploads.upload(body, self._writes.max_bytes, partial=partial))

    def _apply(
        self, conn: Tx, target: DataTarget, method: str, jobs: list[Job], stamp: Stamp
    ) -> None:
        budget = [MAX_BULK_CASCADE]
        target = self._writes.current(conn, target)
        for job in jobs:
            for path in job.paths:
                if method == "DELETE":
                    self._delete(conn, target, path, job.cascade, budget)
                else:
                    assert job.upload is not None
                    getattr(self._writes, method.lower())(conn, target, path, job.upload, stamp)

    def _delete(
        self, conn: Tx, target: DataTarget, path: str, cascade: bool, budget: list[int]
    ) -> None:
        if not cascade:
            self._writes.delete(conn, target, paths.entry_path(path))
            return
        if not target.grants.whole_subtree(path, "delete"):
            target.refuse(f"Not permitted to delete data at {path} and below")
        found = store.count_below(conn, target.group_id, path, budget[0] + 1)
        if found > budget[0]:
            raise ValidationError(
                "jobs",
                f"a bulk request may delete at most {MAX_BULK_CASCADE} entries with cascade;"
                f" use DELETE on {path} with cascade=true",
            )
        budget[0] -= store.delete_below(conn, target.group_id, path, found)

    async def _get(
        self, target: DataTarget, jobs: Sequence[dict[str, Any]], names: list[tuple[str, ...]]
    ) -> Body:
        by_path: dict[str, Any] = {}
        left_out: dict[str, list[str]] = {"missing_paths": [], "unread_paths": []}
        keys: dict[str, Any] = {}
        budget = ReadBudget()  # one for the whole request, whatever the number of jobs
        for job, found in zip(jobs, names, strict=True):
            params = query.parse({k: v for k, v in job.items() if k != "paths"})
            if params.key and len(found) > 1:
                raise ValidationError("last_evaluated_key", "needs a job that names one path")
            for path in found:
                try:
                    body = await self._one(target, path, params, budget)
                except BudgetSpent:
                    left_out["unread_paths"].append(path)
                    continue
                if body is None:
                    left_out["missing_paths"].append(path)
                    continue
                if "data" in body and "last_evaluated_key" in body:
                    keys[path] = body.pop("last_evaluated_key")
                by_path[path] = body.get("data", body)
        out: Body = {"data_by_path": by_path}
        out |= {name: found for name, found in left_out.items() if found}
        if keys:
            out["last_evaluated_key_by_path"] = keys
        return out

    async def _one(
        self, target: DataTarget, path: str, params: query.DataQuery, budget: ReadBudget
    ) -> Body | None:
        if params.cascade:
            return await self._reads.many(target, path, params, budget)
        return self._reads.one(target, path, params, budget)
