"""How a caller stands towards an account (a user or a device): what they may do, and what
they may see.

Every decision is asked of the permission engine (`edge/access/engine.py`), with the
kind's permissions (`user_permissions`, `device_permissions`); this module only gathers what
the engine needs about the target account (its home project, the groups it belongs to,
whether it is an admin) and applies the rules of docs/permissions.md and docs/devices.md:
everyone may read and update themselves; group reach never covers org or project admins;
a device's owner may read it, and is an admin of it when the setting
`device_owners_have_admin_access` says so. Above all of it stands one shield (`_covers`):
whoever is not an org admin stands over an account (is its admin, updates or deletes it)
only while its reach covers everything the account administers, so an admin of one project
or group never takes over an account that administers another.
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
    admin = _admin_over(grants, account, held, owner_admin=owner_admin and owner)
    read = is_self or owner or admin or _reaches(grants, kind.name, account, held, "read")
    acts = kind.admin_acts and admin
    update = is_self or acts or _may_act(grants, kind.name, account, held, "update")
    delete = acts or _may_act(grants, kind.name, account, held, "delete")
    return Relation(is_self, owner, admin, read, update, delete)


def _admin_over(grants: Caller, account: Account, held: Holdings, *, owner_admin: bool) -> bool:
    """Org admins are admins over every account of their org; anyone else only from a
    place over the account (`_placed_over`) and while its reach covers what the account
    administers (`_covers`). The place is asked first: for most callers it is the cheaper
    "no"."""
    if grants.is_org_admin:
        return True
    return _placed_over(grants, account, held, owner_admin) and _covers(grants, held)


def _placed_over(grants: Caller, account: Account, held: Holdings, owner_admin: bool) -> bool:
    """An admin of the account's home project; an admin of a group it is a member of, or its
    owner made its admin by the setting (`owner_admin`), but neither over an org or project
    admin."""
    if grants.project(account.project_id).is_admin:
        return True
    if held.is_admin:
        return False
    return owner_admin or any(_group_admin(grants, held, g) for g in held.member_groups)


def _covers(grants: Caller, held: Holdings) -> bool:
    """The shield, the one every check of standing over an account asks: whether the
    caller's reach covers everything the account administers (the org; each project,
    directly or through a role; each group, directly or as an admin of its project). An
    admin of Apollo is no admin over Apollo's device that administers Gemini: with its key
    reset, they would be Gemini's admin. Point queries on what the account holds only."""
    if grants.is_org_admin:
        return True
    if held.is_org_admin:
        return False
    return all(grants.project(p).is_admin for p in held.admin_projects) and all(
        _group_admin(grants, held, g) for g in held.admin_groups
    )


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
    """Update or delete: reach, and the shield (`_covers`): rights to update or delete
    accounts, at any level, never act on an account that administers what the caller does
    not (so never on admins for non-admins, and user rights held through a group never
    reach that group's admin)."""
    return _reaches(grants, kind, account, held, action) and _covers(grants, held)


def may_view(grants: Caller, rel: Relation, kind: str) -> bool:
    """Whether the caller may see which projects, groups or roles an account holds."""
    return rel.is_self or grants.org.allows(kind, "read")
