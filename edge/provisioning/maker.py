"""Whether a claim's maker still holds the rights the claim hands out (docs/provisioning.md).

A claim gives each device it enrolls its project and its template's group access, on its
maker's authority. That authority is asked again at every enrollment, not only when the
claim is made: a maker who was deleted, suspended, or is no longer an admin of the claim's
project (org admin for an org-level claim) or of a group of its template can no longer
make devices through it. Groups deleted since are skipped, as enrollment skips them.
"""

from __future__ import annotations

from edge.access.engine import Permissions
from edge.kernel.principal import Principal
from storage import devices as device_store
from storage import groups as group_store
from storage import staff as staff_store
from storage import users as user_store
from storage.database import Database
from storage.records import Claim, Group
from storage.rows import Tx


def still_entitled(db: Database, permissions: Permissions, claim: Claim) -> bool:
    """Whether the claim's maker exists, is active and still administers what it gives."""
    maker, groups = db.read(lambda c: (_maker(c, claim), _groups(c, claim)))
    if maker is None:
        return False
    held = permissions.caller(maker)
    if claim.project_id is None and not held.is_org_admin:
        return False
    if not held.is_project_admin(claim.project_id):
        return False
    return all(held.is_group_admin(group.id, group.project_id) for group in groups)


def _groups(conn: Tx, claim: Claim) -> list[Group]:
    """The template's groups that still exist in the claim's org."""
    found = (group_store.get(conn, group_id) for group_id in claim.template.get("groups", {}))
    return [group for group in found if group is not None and group.org_id == claim.org_id]


def _maker(conn: Tx, claim: Claim) -> Principal | None:
    """The maker as a principal of the claim's org (no session), if they are still active."""
    maker_id = claim.created_by
    if maker_id is None:
        return None
    user = user_store.get(conn, maker_id)
    if user is not None:
        active = user.is_active and user.org_id == claim.org_id
        return Principal("user", user.id, None, claim.org_id) if active else None
    device = device_store.get(conn, maker_id)
    if device is not None:
        active = device.is_active and device.org_id == claim.org_id
        return Principal("device", device.id, None, claim.org_id) if active else None
    if staff_store.get(conn, maker_id) is not None:
        return Principal("staff", maker_id, None, claim.org_id)
    return None
