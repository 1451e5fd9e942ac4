"""Who may take an organization's running-job places (docs/jobs.md, "Running jobs").

An organization runs at most `max_running` jobs at once. So that one caller with update
rights on a few devices cannot take them all (and hold them for weeks with a long timeout
and retries on an offline device), a maker who is not an org admin also meets:

- `per_user`: at most this many running jobs of their own;
- `per_project`: at most this many running jobs in the job's project, whoever made them;
- `admin_reserve`: the org's last places are its admins'; others stop at
  `max_running - admin_reserve`.

Org admins (and staff signed in to the org) are held to `max_running` alone, so they
always find room the others cannot take, and they may end any job of the org to make
more. Every count is read in the write that makes the job, so two makers never both pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from edge.kernel.errors import Conflict
from storage import jobs as store
from storage.rows import Tx

WAIT = "cancel one, or wait for one to end"


@dataclass(frozen=True)
class Shares:
    max_running: int  # jobs_max_running: per organization
    per_user: int  # jobs_max_running_per_user
    per_project: int  # jobs_max_running_per_project
    admin_reserve: int  # jobs_admin_reserve


@dataclass(frozen=True)
class Maker:
    """Who makes a job, and where: what the shares are counted against."""

    org_id: str
    actor: str
    project_id: str | None
    is_org_admin: bool


def check(conn: Tx, shares: Shares, maker: Maker) -> None:
    """A 409 naming the share the new job would pass; nothing when it fits."""
    running = store.running_in_org(conn, maker.org_id, maker.actor, maker.project_id)
    if running.org >= shares.max_running:
        raise Conflict(
            f"The organization has {shares.max_running} jobs running, the most it may: {WAIT}"
        )
    if maker.is_org_admin:
        return
    others = shares.max_running - shares.admin_reserve
    if running.org >= others:
        raise Conflict(
            f"The organization has {running.org} jobs running; its last"
            f" {shares.admin_reserve} places are for its org admins (jobs_admin_reserve): {WAIT}"
        )
    if running.maker >= shares.per_user:
        raise Conflict(
            f"You have {running.maker} jobs running in the organization, the most one maker"
            f" may (jobs_max_running_per_user): {WAIT}"
        )
    if maker.project_id is not None and running.project >= shares.per_project:
        raise Conflict(
            f"The project has {running.project} jobs running, the most one project may"
            f" (jobs_max_running_per_project): {WAIT}"
        )
