"""What an account holds: the one model of it, and the one query behind it.

A user's or device's holdings are the access objects it holds directly plus, for admin
status, those of the active roles it holds. Services read holdings of the *target* of a
request (the user being shown or changed, the grantee of an access object), never of the
caller, so their cost follows what that account holds, not what the caller holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from storage import access as store
from storage.database import Database
from storage.records import Access


@dataclass
class Holdings:
    """What one account holds. Access objects are its own; admin status counts roles too.
    `admin_groups` (groups it administers) does not make it an admin (`is_admin`): it shields
    it from callers who do not administer those groups (edge/accounts/standing.py)."""

    org_access: Access | None = None
    project_access: dict[str, Access] = field(default_factory=dict)
    group_access: dict[str, Access] = field(default_factory=dict)
    role_ids: list[str] = field(default_factory=list)
    group_projects: dict[str, str | None] = field(default_factory=dict)
    is_org_admin: bool = False
    admin_projects: set[str] = field(default_factory=set)
    admin_groups: set[str] = field(default_factory=set)

    @property
    def is_admin(self) -> bool:
        """An org or project admin: an account that non-admins and group admins never act on."""
        return self.is_org_admin or bool(self.admin_projects)

    @property
    def member_groups(self) -> list[str]:
        return [g for g, row in self.group_access.items() if row.is_active]

    @property
    def member_projects(self) -> list[str]:
        return [p for p, row in self.project_access.items() if row.is_active]

    def add(self, access: Access, via_role: bool, target_active: bool) -> None:
        kind, target = access.kind, access.target_id
        admin = access.is_admin and access.is_active and target_active
        if kind == "org":
            self.is_org_admin = self.is_org_admin or admin
        elif kind == "project" and admin:
            self.admin_projects.add(target)
        elif kind == "group" and admin:
            self.admin_groups.add(target)
        if via_role:
            return
        if kind == "org":
            self.org_access = access
        elif kind == "project":
            self.project_access[target] = access
        elif kind == "group":
            self.group_access[target] = access
        elif kind == "role" and access.is_active:
            self.role_ids.append(target)


def of_accounts(db: Database, org_id: str, account_ids: Sequence[str]) -> dict[str, Holdings]:
    """Holdings of these accounts (users, devices or roles) of one organization."""
    out = {account_id: Holdings() for account_id in account_ids}
    if not account_ids:
        return out
    rows = db.read(lambda c: store.holdings(c, org_id, account_ids))
    states = _target_states(db, [access for _, _, access in rows])
    for holder, via_role, access in rows:
        active, project = states.get(access.target_id, (True, ""))
        holding = out[holder]
        if access.kind == "group":
            holding.group_projects[access.target_id] = project or None
        holding.add(access, via_role, active)
    return out


def of_account(db: Database, org_id: str, account_id: str) -> Holdings:
    return of_accounts(db, org_id, [account_id])[account_id]


def _target_states(db: Database, grants: Sequence[Access]) -> dict[str, tuple[bool, str]]:
    projects = sorted({a.target_id for a in grants if a.kind == "project"})
    groups = sorted({a.target_id for a in grants if a.kind == "group"})
    if not projects and not groups:
        return {}
    return db.read(lambda c: store.target_states(c, projects, groups))
