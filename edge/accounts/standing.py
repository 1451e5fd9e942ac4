"""How a caller stands towards an account (a user or a device): what they may do, and what
they may see.

Every decision is asked of the permission engine (`edge/access/engine.py`), with the
kind's permissions (`user_permissions`, `device_permissions`); this module only gathers what
the engine needs about the target account (its home project, the groups it belongs to,
whether it is an admin) and applies the rules of docs/permissions.md and docs/devices.md:
everyone may read and update themselves; group reach never covers org or project admins;
non-admins never act on admins, nor on a group admin unless they administer each group it
administers; a device's owner may read it, and is an admin of it when
the setting `device_owners_have_admin_access` says so.
"""

from __future__ import annotations

from edge.access.engine import Caller
from edge.access.holdings import Holdings
from edge.accounts.kind import A, Account, Kind, Relation


def relation(
    grants: Caller,
    kind: Kind[A],
    account: A,
    held: Holdings,
    *,
    owner: bool = False,
    owner_admin: bool = False,
) -> Relation:
    """`owner`: the caller owns the account; `owner_admin`: and its settings make owners
    admins."""
    me = grants.principal
    is_self = me.kind == kind.name and me.account_id == account.id
    admin = _admin_over(grants, account, held) or (owner_admin and owner and not held.is_admin)
    read = is_self or owner or admin or _reaches(grants, kind.name, account, held, "read")
    acts = kind.admin_acts and admin
    update = is_self or acts or _may_act(grants, kind.name, account, held, "update")
    delete = acts or _may_act(grants, kind.name, account, held, "delete")
    return Relation(is_self, owner, admin, read, update, delete)


def _admin_over(grants: Caller, account: Account, held: Holdings) -> bool:
    if grants.is_org_admin:
        return True
    if held.is_org_admin:
        return False
    if grants.project(account.project_id).is_admin:
        return True
    return not held.is_admin and any(_group_admin(grants, held, g) for g in held.member_groups)


def _group_admin(grants: Caller, held: Holdings, group_id: str) -> bool:
    return grants.is_group_admin(group_id, held.group_projects.get(group_id))


def _reaches(grants: Caller, kind: str, account: Account, held: Holdings, action: str) -> bool:
    """Whether a level that covers the account lets the caller do `action` (admins aside)."""
    if grants.may(kind, action, project_id=account.project_id):
        return True
    if action == "read" and any(
        grants.project(p).allows(kind, "read") for p in held.member_projects
    ):
        return True
    return any(
        grants.group(g).allows(kind, action) or _group_admin(grants, held, g)
        for g in held.member_groups
    )


def _may_act(grants: Caller, kind: str, account: Account, held: Holdings, action: str) -> bool:
    """Update or delete: reach, and non-admins never act on admins (so neither does a
    group admin nor a group-level block, which never cover org or project admins). A group
    admin is shielded the same way: only an admin of every group it administers (directly
    or through the group's project) acts on it, so user rights held through a group never
    reach that group's admin."""
    if not _reaches(grants, kind, account, held, action):
        return False
    if held.is_org_admin and not grants.is_org_admin:
        return False
    if held.admin_projects and not grants.is_org_admin:
        return any(grants.project(p).is_admin for p in held.admin_projects)
    return all(_group_admin(grants, held, g) for g in held.admin_groups)


def may_view(grants: Caller, rel: Relation, kind: str) -> bool:
    """Whether the caller may see which projects, groups or roles an account holds."""
    return rel.is_self or grants.org.allows(kind, "read")
