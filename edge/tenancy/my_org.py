"""The caller's own organization: every member may read its settings; org admins change
the ones an organization runs itself by. Staff-only settings (such as
`max_roles_per_user`, the allowed login fields, legacy permissions) stay with staff.
"""

from __future__ import annotations

from typing import Any

from edge.access.engine import Permissions
from edge.kernel import clock
from edge.kernel.errors import Denied, NotFound
from edge.kernel.principal import Principal
from edge.tenancy.orgs import COLUMNS, Orgs, present
from edge.tenancy.settings import validated
from storage import orgs as store
from storage.database import Database
from storage.rows import Tx

Row = dict[str, Any]
PATCHABLE_COLUMNS = ("name", "description", "is_delete_protected")
PATCHABLE_SETTINGS = (
    "device_owners_have_admin_access",
    "device_owners_can_tunnel",
    "device_creators_are_owners_by_default",
    "project_delete_protection_on_by_default",
    "group_delete_protection_on_by_default",
    "role_delete_protection_on_by_default",
    "user_delete_protection_on_by_default",
    "device_delete_protection_on_by_default",
    "groups_require_delete_permission_to_put_data_by_default",
    "mfa_required",
    "custom_settings",
    "default_locale",
    "default_from_address",
    "reset_token_expire_hours",
    "access_token_expire_hours",
    "refresh_token_expire_hours",
    "session_expire_mins",
    "pii_admin_only",
)


class MyOrg:
    def __init__(self, db: Database, orgs: Orgs, permissions: Permissions) -> None:
        self._db = db
        self._orgs = orgs
        self._permissions = permissions

    def get(self, principal: Principal) -> Row:
        return present(self._orgs.get_row(_org_of(principal)))

    async def patch(self, principal: Principal, body: Row) -> None:
        org_id = _org_of(principal)
        if not self._permissions.caller(principal).is_org_admin:
            raise Denied("Only org admins may change the organization's settings")
        current = self._orgs.get_row(org_id)
        changes = _columns(body)
        changes.update(
            settings={**current.settings, **validated(body, PATCHABLE_SETTINGS)},
            last_updated_date=clock.now_iso(),
            last_updated_by=principal.actor,
        )

        def write(conn: Tx) -> None:
            if not store.patch(conn, org_id, changes):
                raise NotFound("Organization not found")

        await self._db.write(write)


def _org_of(principal: Principal) -> str:
    if principal.org_id is None:
        raise Denied("Sign in to an organization (staff: with scope=<org>) to use /v2/my-org")
    return principal.org_id


def _columns(body: Row) -> Row:
    out = {name: COLUMNS[name](name, body[name]) for name in PATCHABLE_COLUMNS if name in body}
    if "name" in out:
        out["name_folded"] = out["name"].casefold()
    return out
