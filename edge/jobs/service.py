"""Rollout jobs as people manage them (docs/jobs.md): create, list, read, cancel, delete.

Who may:
- create: a user (or scoped staff) who may update every target device (edge/accounts:
  the device's own rules) and read the artifact (edge/files/rights.py); a device never
  makes jobs. Targets are resolved when the job is made (a snapshot); a continuous job
  also takes the devices that join its group, project or tags later (storage triggers).
- read, list, cancel, delete: org admins; admins of the job's project; whoever made it.
  Anyone else of the org gets a 404, as does another org; a device a 403.

A job and its executions are written in one transaction with the audit event; the
scheduler (edge/jobs/scheduler.py) releases them from there on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from edge.access.engine import Caller, Permissions
from edge.accounts.devices import Devices
from edge.jobs import progress, rules, views
from edge.jobs.artifacts import Artifacts, Pinned
from edge.jobs.notices import Notices
from edge.kernel import audit, clock
from edge.kernel.errors import Conflict, Denied, NotFound, ValidationError
from edge.kernel.ids import new_id
from edge.kernel.listing import ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.tenancy.settings import require_org
from storage import groups as group_store
from storage import jobs as store
from storage import projects as project_store
from storage.database import Database
from storage.jobs import Job
from storage.rows import Tx

Row = dict[str, Any]
TABLE, EXECUTION_TABLE = store.LIST, store.EXECUTION_LIST


class Jobs:
    def __init__(
        self,
        db: Database,
        permissions: Permissions,
        devices: Devices,
        artifacts: Artifacts,
        notices: Notices,
        max_targets: int,
    ) -> None:
        self._db = db
        self._permissions = permissions
        self._devices = devices
        self._artifacts = artifacts
        self.notices = notices
        self.max_targets = max_targets
        self.wake: Callable[[], None] = lambda: None  # the scheduler's, set when it runs

    # -- creating ----------------------------------------------------------------------------
    async def create(self, principal: Principal, body: Row) -> Row:
        caller = self._people(principal)
        asked = rules.parse(body, self.max_targets)
        org_id = require_org(principal)
        project_id = self._project(org_id, asked.project_id)
        if asked.targets.group_id is not None:
            project_id = project_id or self._group_project(org_id, asked.targets.group_id)
        device_ids = self._targets(caller, asked, project_id)
        if not device_ids and not asked.continuous:
            raise NotFound("targets: no device matches")
        pinned = None
        if asked.artifact is not None:
            pinned = await self._artifacts.pin(principal, *asked.artifact)
        job = _new_job(principal, org_id, project_id, asked, pinned)
        made = audit.event(
            "job_created",
            principal,
            org_id=org_id,
            target=("job", job.id),
            details={
                "targets": job.targets,
                "continuous": job.continuous,
                "devices": len(device_ids),
            },
        )

        def write(conn: Tx) -> None:
            store.create(conn, job)
            store.add_executions(conn, job, device_ids, job.created_date)

        await self._db.write(audit.along(write, made))
        self.wake()
        return self._view(job.id)

    def _people(self, principal: Principal) -> Caller:
        if principal.kind == "device":
            raise Denied("Devices take part in jobs through their own job routes")
        require_org(principal)
        return self._permissions.caller(principal)

    def _project(self, org_id: str, project_id: str | None) -> str | None:
        if project_id is not None:
            found = self._db.read(lambda c: project_store.get_in_org(c, org_id, project_id))
            if found is None:
                raise NotFound("project_id: project not found")
        return project_id

    def _group_project(self, org_id: str, group_id: str) -> str | None:
        group = self._db.read(lambda c: group_store.get(c, group_id))
        if group is None or group.org_id != org_id:
            raise NotFound("targets.group_id: group not found")
        return group.project_id

    def _targets(self, caller: Caller, asked: rules.Request, project_id: str | None) -> list[str]:
        """The target devices, each of which the caller must be able to update."""
        org_id = caller.principal.org_id or ""
        targets = asked.targets
        if targets.kind == "device_ids":
            found = list(targets.device_ids)
        else:
            found = self._db.read(lambda c: _resolve(c, org_id, targets, project_id))
        if len(found) > self.max_targets:
            raise ValidationError("targets", f"match more than {self.max_targets} devices")
        if not caller.is_org_admin or targets.kind == "device_ids":
            for device_id in found:
                self._may_update(caller.principal, device_id, project_id)
        return found

    def _may_update(self, principal: Principal, device_id: str, project_id: str | None) -> None:
        try:
            target = self._devices.target(principal, device_id)
            self._devices.require(target, "update")
        except NotFound:
            raise NotFound(f"targets: device {device_id} not found") from None
        except Denied:
            raise Denied(f"targets: not permitted to update device {device_id}") from None
        if project_id is not None and target.account.project_id != project_id:
            raise ValidationError("targets", f"device {device_id} is not in the job's project")

    # -- reading -----------------------------------------------------------------------------
    async def list(self, principal: Principal, query: ListQuery) -> Page:
        caller = self._people(principal)
        org_id = require_org(principal)
        projects = None if caller.is_org_admin else caller.admin_projects()
        page = await fetch(
            self._db, TABLE, query, *store.visible(org_id, projects, principal.actor)
        )
        page.rows = [views.job(j) for j in page.rows]
        return page

    def get(self, principal: Principal, job_id: str) -> Row:
        self._readable(principal, job_id)
        return self._view(job_id)

    async def executions(self, principal: Principal, job_id: str, query: ListQuery) -> Page:
        self._readable(principal, job_id)
        page = await fetch(self._db, EXECUTION_TABLE, query, *store.of_job(job_id))
        page.rows = [views.execution(e) for e in page.rows]
        return page

    def execution(self, principal: Principal, job_id: str, device_id: str) -> Row:
        self._readable(principal, job_id)
        found = self._db.read(lambda c: store.execution(c, job_id, device_id))
        if found is None:
            raise NotFound("Execution not found")
        return views.execution(found)

    def may_read(self, principal: Principal, job_id: str) -> bool:
        """Whether the caller may read the job now: what the live feed asks before it
        tells a job's progress."""
        try:
            self._readable(principal, job_id)
        except (NotFound, Denied):
            return False
        return True

    def _readable(self, principal: Principal, job_id: str) -> Job:
        caller = self._people(principal)
        job = self._db.read(lambda c: store.get(c, job_id))
        if job is None or job.org_id != principal.org_id:
            raise NotFound("Job not found")
        if caller.is_org_admin or job.created_by == principal.actor:
            return job
        if job.project_id is not None and caller.project(job.project_id).is_admin:
            return job
        raise NotFound("Job not found")

    def _view(self, job_id: str) -> Row:
        def both(conn: Tx) -> tuple[Job | None, dict[str, int]]:
            return store.get(conn, job_id), store.counts(conn, job_id)

        job, counts = self._db.read(both)
        if job is None:
            raise NotFound("Job not found")
        return views.job(job, counts)

    # -- ending ------------------------------------------------------------------------------
    async def cancel(self, principal: Principal, job_id: str, force: bool) -> Row:
        job = self._readable(principal, job_id)
        event = audit.event(
            "job_canceled",
            principal,
            org_id=job.org_id,
            target=("job", job.id),
            details={"force": force},
        )
        now = clock.now_iso()

        def write(conn: Tx) -> progress.Changes:
            current = store.get(conn, job_id)
            if current is None:
                raise NotFound("Job not found")
            if current.state not in store.RUNNING:
                raise Conflict(f"The job has ended ({current.state})")
            return progress.stop(conn, current, "CANCELED", "canceled", force, now)

        changes = await self._db.write(audit.along(write, event))
        self.notices.tell(changes)
        return self._view(job_id)

    async def delete(self, principal: Principal, job_id: str, force: bool) -> None:
        job = self._readable(principal, job_id)
        if job.state in store.RUNNING and not force:
            raise Conflict("The job is still running: cancel it first, or delete with force")
        event = audit.event(
            "job_deleted",
            principal,
            org_id=job.org_id,
            target=("job", job.id),
            details={"force": force, "state": job.state},
        )

        def write(conn: Tx) -> set[str]:
            devices = set(store.released_devices(conn, job_id))
            if not store.delete(conn, job_id):
                raise NotFound("Job not found")
            return devices

        devices = await self._db.write(audit.along(write, event))
        self.notices.tell(progress.Changes(devices=devices))


def _resolve(conn: Tx, org_id: str, targets: rules.Targets, project_id: str | None) -> list[str]:
    if targets.group_id is not None:
        return store.group_devices(conn, targets.group_id)
    if targets.project_id is not None:
        return store.project_devices(conn, org_id, targets.project_id)
    return store.tagged_devices(conn, org_id, project_id, targets.tags)


def _new_job(
    principal: Principal,
    org_id: str,
    project_id: str | None,
    asked: rules.Request,
    pinned: Pinned | None,
) -> Job:
    now = clock.now_iso()
    targets = asked.targets
    return Job(
        id=new_id(),
        org_id=org_id,
        project_id=project_id,
        description=asked.description,
        document=asked.document,
        targets=targets.as_row(),
        target_group_id=targets.group_id,
        target_project_id=targets.project_id,
        target_tags=list(targets.tags) if targets.tags else None,
        continuous=asked.continuous,
        artifact_group_id=pinned.group_id if pinned else None,
        artifact_path=pinned.path if pinned else None,
        artifact_etag=pinned.etag if pinned else None,
        artifact_size=pinned.size if pinned else None,
        artifact_sha256=pinned.sha256 if pinned else None,
        policy=asked.policy.as_row(),
        state="SCHEDULED",
        reason=None,
        window_start=now,
        window_released=0,
        created_date=now,
        created_by=principal.actor,
        last_updated_date=now,
        completed_date=None,
    )
