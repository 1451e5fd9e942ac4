"""Rollout jobs as people manage them (docs/jobs.md): create, list, read, cancel, delete.

Who may:
- create: a user (or scoped staff) who knows the job's project and its target group or
  project (else 404, naming no device), may update every target device (edge/accounts:
  the device's own rules) and read the artifact (edge/files/rights.py); a device never
  makes jobs. Every target device must be in the job's project when it has one. Targets
  are resolved when the job is made (a snapshot); a continuous job also takes the devices
  that join its group, project or tags later (storage triggers, migration 0030), but only
  devices of its project, only up to jobs_max_targets, and a device that is itself an
  admin only when an org admin made the job: so its maker must be an admin of its scope,
  its project (a project admin) or the org when it has none (an org admin), whoever
  matches now. An org may have jobs_max_running jobs running, and a maker who is not an
  org admin a share of them (edge/jobs/shares.py: 409 past), made at a pace
  (edge/jobs/pace.py: 429 past).
- read, list, cancel, delete: org admins; admins of the job's project; whoever made it,
  while they may still do what making it took (`_still_may` asks again what `_create`
  asked). Its maker may cancel it while it runs in any case, so that the running share it
  holds (edge/jobs/shares.py) can always be freed. Anyone else of the org gets a 404, as
  does another org; a device a 403.
- project sessions: a session signed in to a project lists, reads and ends only that
  project's jobs (another project's or an org-level job is a 404), and makes jobs only in
  it (its project by default; another `project_id` is a 400), as for devices and claims.

A job and its executions are written in one transaction with the audit event; the
scheduler (edge/jobs/scheduler.py) releases them from there on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edge.access.engine import Caller, Permissions
from edge.access.standing import GroupStanding, project_standing
from edge.accounts.devices import Devices
from edge.jobs import progress, rules, shares, views
from edge.jobs.artifacts import Artifacts, Pinned
from edge.jobs.notices import Notices
from edge.jobs.pace import Pace
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
from storage.listing import Scope
from storage.records import Group
from storage.rows import Tx

Row = dict[str, Any]
TABLE, EXECUTION_TABLE = store.LIST, store.EXECUTION_LIST
DEVICE_EXECUTION_TABLE = store.DEVICE_EXECUTION_LIST
UNSEEN = "targets: a target device was not found"  # one message, naming no device


@dataclass(frozen=True)
class JobLimits:
    max_targets: int  # devices per job (jobs_max_targets)
    shares: shares.Shares  # running jobs per org, maker, project
    create_per_hour: int  # jobs one maker (not an org admin) may make per hour


class Jobs:
    def __init__(
        self,
        db: Database,
        permissions: Permissions,
        devices: Devices,
        artifacts: Artifacts,
        notices: Notices,
        limits: JobLimits,
    ) -> None:
        self._db = db
        self._permissions = permissions
        self._devices = devices
        self._artifacts = artifacts
        self.notices = notices
        self.limits = limits
        self._pace = Pace(limits.create_per_hour)
        self.wake: Callable[[], None] = lambda: None  # the scheduler's, set when it runs

    # -- creating ----------------------------------------------------------------------------
    async def create(self, principal: Principal, body: Row) -> Row:
        caller = self._people(principal)
        asked = rules.parse(body, self.limits.max_targets)
        if caller.is_org_admin:
            return await self._create(caller, asked)
        with self._pace.turn(principal.actor):
            return await self._create(caller, asked)

    async def _create(self, caller: Caller, asked: rules.Request) -> Row:
        principal = caller.principal
        org_id = require_org(principal)
        project_id = self._project(caller, org_id, _session_project(principal, asked.project_id))
        if asked.targets.group_id is not None:
            group = self._group(caller, org_id, asked.targets.group_id)
            project_id = _group_scope(group, project_id)
        if asked.continuous:
            _may_cover(caller, asked.targets, project_id)
        maker = shares.Maker(org_id, principal.actor, project_id, caller.is_org_admin)
        room = self.limits.shares
        self._db.read(lambda c: shares.check(c, room, maker))  # before every target's checks
        device_ids = self._targets(caller, asked, project_id)
        if not device_ids and not asked.continuous:
            raise NotFound("targets: no device matches")
        pinned = None
        if asked.artifact is not None:
            pinned = await self._artifacts.pin(principal, *asked.artifact)
        reach = (self.limits.max_targets, caller.is_org_admin)
        job = _new_job(principal, org_id, project_id, asked, pinned, reach)
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
            shares.check(conn, room, maker)  # again in the write: two never both pass
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

    def _project(self, caller: Caller, org_id: str, project_id: str | None) -> str | None:
        """The job's project, which the caller must know (a 404 as for a missing one)."""
        if project_id is not None:
            found = self._db.read(lambda c: project_store.get_in_org(c, org_id, project_id))
            if found is None or not project_standing(caller, project_id).known:
                raise NotFound("project_id: project not found")
        return project_id

    def _group(self, caller: Caller, org_id: str, group_id: str) -> Group:
        """The target group, which the caller must see (a 404 as for a missing one)."""
        group = self._db.read(lambda c: group_store.get(c, group_id))
        if group is None or group.org_id != org_id or not GroupStanding(caller, group).sees():
            raise NotFound("targets.group_id: group not found")
        return group

    def _targets(self, caller: Caller, asked: rules.Request, project_id: str | None) -> list[str]:
        """The target devices, each of which the caller must be able to update, and each in
        the job's project when it has one. A device the caller cannot see is never named."""
        org_id = caller.principal.org_id or ""
        targets, limit = asked.targets, self.limits.max_targets
        if targets.kind == "device_ids":
            found = list(targets.device_ids)
        else:
            found = self._db.read(lambda c: _resolve(c, org_id, targets, project_id))
        if len(found) > limit:
            raise ValidationError("targets", f"match more than {limit} devices")
        if not caller.is_org_admin or targets.kind == "device_ids":
            for device_id in found:
                self._may_update(caller.principal, device_id)
        if project_id is not None and found:
            outside = self._db.read(lambda c: store.outside_project(c, found, project_id))
            if outside:
                raise ValidationError("targets", f"{outside} devices are not in the job's project")
        return found

    def _may_update(self, principal: Principal, device_id: str) -> None:
        try:
            target = self._devices.target(principal, device_id)
            self._devices.require(target, "update")
        except NotFound:
            raise NotFound(UNSEEN) from None
        except Denied:  # the caller sees this device: naming it tells nothing new
            raise Denied(f"targets: not permitted to update device {device_id}") from None

    # -- reading -----------------------------------------------------------------------------
    async def list(self, principal: Principal, query: ListQuery) -> Page:
        page = await fetch(self._db, TABLE, query, *self._listable(principal))
        ids = [j.id for j in page.rows]
        counts = self._db.read(lambda c: store.counts_of(c, ids)) if ids else {}
        page.rows = [views.job(j, counts[j.id]) for j in page.rows]
        return page

    def _listable(self, principal: Principal) -> Scope:
        """The jobs the caller may list: the org's for its admins, else those of the
        projects it administers and those it made; in a project session, of that project
        alone."""
        caller = self._people(principal)
        projects = None if caller.is_org_admin else caller.admin_projects()
        scope = store.visible(require_org(principal), projects, principal.actor)
        if principal.project_id is not None:
            scope &= store.in_project(principal.project_id)
        return scope

    def get(self, principal: Principal, job_id: str) -> Row:
        """The job with its counts, read once: the read that checks the caller is the one
        shown (the GET a console polls during a rollout)."""

        def both(conn: Tx) -> tuple[Job | None, dict[str, int]]:
            return store.get(conn, job_id), store.counts(conn, job_id)

        job, counts = self._db.read(both)
        return views.job(self._may_read(principal, job), counts)

    async def executions(self, principal: Principal, job_id: str, query: ListQuery) -> Page:
        self._readable(principal, job_id)
        page = await fetch(self._db, EXECUTION_TABLE, query, *store.of_job(job_id))
        page.rows = [views.execution(e) for e in page.rows]
        return page

    async def of_device(self, principal: Principal, device_id: str, query: ListQuery) -> Page:
        """A device's executions of the jobs the caller may list (GET /v2/jobs's rule), each
        with its job's description and state. The device must be readable (else 404); a
        reader who may list none of its jobs gets an empty list, as GET /v2/jobs would."""
        self._people(principal)
        self._devices.require(self._devices.target(principal, device_id), "read")
        scope = store.of_device_in(device_id, self._listable(principal))
        page = await fetch(self._db, DEVICE_EXECUTION_TABLE, query, *scope)
        named = self._db.read(lambda c: store.names(c, [e.job_id for e in page.rows]))
        page.rows = [views.of_device(e, named.get(e.job_id)) for e in page.rows]
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
        return self._may_read(principal, self._db.read(lambda c: store.get(c, job_id)))

    def _may_read(self, principal: Principal, job: Job | None) -> Job:
        """The job, when the caller may read it (else 404, as for a job that is not)."""
        caller = self._people(principal)
        job = _in_sight(principal, job)
        if caller.is_org_admin:
            return job
        if job.project_id is not None and caller.project(job.project_id).is_admin:
            return job
        if self._still_may(caller, job):
            return job
        raise NotFound("Job not found")

    def _still_may(self, caller: Caller, job: Job) -> bool:
        """Whether the caller made the job and may still do what making it took (`_create`
        asked again; the admins of its project and the org pass before): know its project,
        see its target group, and update every target device that still exists (a device
        in the trash no longer counts). A continuous job took an admin of its scope, who
        passed before. Who lost these no longer reads it."""
        if job.created_by != caller.principal.actor or job.continuous:
            return False
        if job.project_id is not None and not project_standing(caller, job.project_id).known:
            return False
        if job.target_group_id is not None and not self._sees_group(caller, job.target_group_id):
            return False
        device_ids = self._db.read(lambda c: store.existing_targets(c, job.id))
        try:
            for device_id in device_ids:
                self._may_update(caller.principal, device_id)
        except (NotFound, Denied):
            return False
        return True

    def _sees_group(self, caller: Caller, group_id: str) -> bool:
        """Whether the caller still sees the target group (one deleted since asks nothing:
        its members that still exist are asked one by one)."""
        group = self._db.read(lambda c: group_store.get(c, group_id))
        return group is None or GroupStanding(caller, group).sees()

    def _may_end(self, principal: Principal, job_id: str) -> Job:
        """The job the caller may cancel: one it may read, or its own while it runs, even
        when it lost the rights making it took, so that the share of running jobs it holds
        (edge/jobs/shares.py) can always be freed."""
        job = self._db.read(lambda c: store.get(c, job_id))
        if job is not None and job.created_by == principal.actor and job.state in store.RUNNING:
            self._people(principal)
            return _in_sight(principal, job)
        return self._may_read(principal, job)

    def _view(self, job_id: str) -> Row:
        job, counts = self._db.read(lambda c: (store.get(c, job_id), store.counts(c, job_id)))
        if job is None:
            raise NotFound("Job not found")
        return views.job(job, counts)

    # -- ending ------------------------------------------------------------------------------
    async def cancel(self, principal: Principal, job_id: str, force: bool) -> Row:
        job = self._may_end(principal, job_id)
        event = audit.event(
            "job_canceled",
            principal,
            org_id=job.org_id,
            target=("job", job.id),
            details={"force": force},
        )
        now = clock.now_iso()

        def write(conn: Tx) -> progress.Changes:
            current = store.core(conn, job_id)
            if current is None:
                raise NotFound("Job not found")
            if current.state not in store.RUNNING:
                raise Conflict(f"The job has ended ({current.state})")
            return progress.stop(conn, current, "CANCELED", "canceled", force, now)

        changes = await self._db.write(audit.along(write, event))
        await self.notices.tell(changes)
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
        await self.notices.tell(progress.Changes(devices=devices))


def _session_project(principal: Principal, given: str | None) -> str | None:
    """The job's project in a project session: the session's, which a `project_id` given
    must be (a 400 else, as for devices and claims made there): no org-level job either."""
    if principal.project_id is None:
        return given
    if given not in (None, principal.project_id):
        raise ValidationError("project_id", "must be the project of this session")
    return principal.project_id


def _in_sight(principal: Principal, job: Job | None) -> Job:
    """The job when it is of the caller's org, and of its session's project when the
    session has one (else 404, as for a job that is not: another project's job and an
    org-level job are not in a project session's sight)."""
    if job is None or job.org_id != principal.org_id:
        raise NotFound("Job not found")
    if principal.project_id is not None and job.project_id != principal.project_id:
        raise NotFound("Job not found")
    return job


def _group_scope(group: Group, project_id: str | None) -> str | None:
    """The job's project for a group target: the group's, which the job's (when given)
    must be; an org-level group's members in the job's project when it has one."""
    if project_id is not None and group.project_id not in (None, project_id):
        raise ValidationError("targets.group_id", "the group is not in the job's project")
    return project_id or group.project_id


def _may_cover(caller: Caller, targets: rules.Targets, project_id: str | None) -> None:
    """A continuous job takes every device that will ever join its scope (its project, or
    the org when it has none), whoever matches now: only an admin of that scope may make
    one, whose rights cover every device of it."""
    if project_id is None:
        if not caller.is_org_admin:
            hint = ": give a project you administer" if targets.kind == "tags" else ""
            raise Denied(f"continuous: only org admins make org-wide continuous jobs{hint}")
    elif not caller.is_project_admin(project_id):
        raise Denied("continuous: only the project's admins make continuous jobs in it")


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
    reach: tuple[int, bool],  # the most targets; whether admin devices that join get it
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
        target_limit=reach[0],
        reaches_admins=reach[1],
    )
