"""How a caller stands towards a device: what they may do, and what they may see.

Every decision is asked of the permission engine (`edge/access/engine.py`), with
`device_permissions` where users have `user_permissions`; this module gathers what the
engine needs about the target device (its home project, the groups it belongs to, whether
it is an admin, its owner) and applies the rules of docs/devices.md: a device may read and
update itself; its owner may read it and give it away, and is an admin of it when the
setting `device_owners_have_admin_access` says so; group reach never covers an admin
device; non-admins never act on admins.
"""

from __future__ import annotations

from dataclasses import dataclass

from edge.access.engine import Caller
from edge.access.holdings import Holdings
from storage.records import Device

RESOURCE = "device"


@dataclass(frozen=True)
class Relation:
    """The caller towards one device. `admin`: sees admin-only fields, sets `iot_scopes`,
    restricted attributes and `is_active`, may force a delete."""

    is_self: bool
    is_owner: bool
    admin: bool
    read: bool
    update: bool
    delete: bool


def is_owner(grants: Caller, device: Device) -> bool:
    me = grants.principal
    return me.kind == "user" and device.owner_id == me.account_id


def relation(grants: Caller, device: Device, held: Holdings, *, owner_admin: bool) -> Relation:
    """`owner_admin`: the caller owns the device and its settings make owners admins."""
    me = grants.principal
    is_self = me.kind == "device" and me.account_id == device.id
    owner = is_owner(grants, device)
    admin = _admin_over(grants, device, held) or (owner_admin and owner and not held.is_admin)
    read = is_self or owner or admin or _reaches(grants, device, held, "read")
    update = is_self or admin or _may_act(grants, device, held, "update")
    delete = admin or _may_act(grants, device, held, "delete")
    return Relation(is_self, owner, admin, read, update, delete)


def _admin_over(grants: Caller, device: Device, held: Holdings) -> bool:
    if grants.is_org_admin:
        return True
    if held.is_org_admin:
        return False
    if grants.project(device.project_id).is_admin:
        return True
    return not held.is_admin and any(_group_admin(grants, held, g) for g in held.member_groups)


def _group_admin(grants: Caller, held: Holdings, group_id: str) -> bool:
    return grants.is_group_admin(group_id, held.group_projects.get(group_id))


def _reaches(grants: Caller, device: Device, held: Holdings, action: str) -> bool:
    """Whether a level that covers the device lets the caller do `action` (admins aside)."""
    if grants.may(RESOURCE, action, project_id=device.project_id):
        return True
    if action == "read" and any(
        grants.project(p).allows(RESOURCE, "read") for p in held.member_projects
    ):
        return True
    return any(
        grants.group(g).allows(RESOURCE, action) or _group_admin(grants, held, g)
        for g in held.member_groups
    )


def _may_act(grants: Caller, device: Device, held: Holdings, action: str) -> bool:
    """Update or delete: reach, and non-admins never act on admin devices."""
    if not _reaches(grants, device, held, action):
        return False
    if held.is_org_admin and not grants.is_org_admin:
        return False
    if held.admin_projects and not grants.is_org_admin:
        return any(grants.project(p).is_admin for p in held.admin_projects)
    return True


def may_view(grants: Caller, rel: Relation, kind: str) -> bool:
    """Whether the caller may see which projects, groups or roles a device holds."""
    return rel.is_self or grants.org.allows(kind, "read")
