"""What one caller may do with the files of one group (docs/files.md, docs/permissions.md).

The rules are those of data (edge/access/paths.py): group access carries `file_paths`;
the longest grant path covering a file decides; group, project and org admins may do
everything; PUT of a new path needs `can_write`, of an existing one `can_update` (`can_write`
under the legacy rule), and also `can_delete` when the group requires delete permission to
put; PATCH needs what changing an existing path needs; DELETE `can_delete`, on every path
below for a cascade. A caller who holds nothing in the group and may not see it gets a 404.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from edge.access.engine import Permissions
from edge.access.paths import PathGrants, needed
from edge.access.standing import GroupStanding
from edge.kernel.errors import Denied, NotFound
from edge.kernel.principal import Principal
from edge.tenancy import settings
from edge.tenancy.settings import require_org
from storage import groups as group_store
from storage.database import Database
from storage.records import Group

LEGACY = "use_legacy_data_and_files_permissions"


@dataclass(frozen=True)
class GroupFiles:
    """A caller's standing towards one group's files."""

    principal: Principal
    group: Group
    grants: PathGrants
    legacy: bool

    def to_put(self, exists: bool) -> tuple[str, ...]:
        rdp = self.group.require_delete_permission_to_put_data
        return needed(exists, "PUT", legacy=self.legacy, delete_to_put=rdp)

    def to_patch(self) -> tuple[str, ...]:
        return needed(True, "PATCH", legacy=self.legacy, delete_to_put=False)

    def require(self, path: str, *rights: str) -> None:
        held = self.grants.at(path)
        for right in rights:
            if not held.has(right):
                raise Denied(f"Not permitted to {right} files at {path}")

    def require_subtree(self, path: str, right: str) -> None:
        if not self.grants.whole_subtree(path, right):
            raise Denied(f"Not permitted to {right} every file under {path}")

    def rules(self, path: str, right: str) -> tuple[list[tuple[str, bool]], bool]:
        return self.grants.rules(path, right)


class FileRights:
    def __init__(self, db: Database, permissions: Permissions) -> None:
        self._db = db
        self._permissions = permissions

    def open(self, principal: Principal, group_id: str) -> GroupFiles:
        """The group (a 404 when it is not the caller's to know) and the caller's grants."""
        org_id = require_org(principal)
        group = self.group(group_id)
        if group is None or group.org_id != org_id:
            raise NotFound("Group not found")
        caller = self._permissions.caller(principal)
        grants = caller.path_grants(group.id, group.project_id, "files", legacy=self.legacy(group))
        if not (grants.admin or grants.grants or GroupStanding(caller, group).sees()):
            raise NotFound("Group not found")
        return GroupFiles(principal, group, grants, grants.legacy)

    def may_read(self, principal: Principal, group_id: str, path: str) -> bool:
        """Whether the caller may read the file at `path` now: what the live feed asks
        before it tells a change."""
        return self.reader(principal, group_id)(path)

    def reader(self, principal: Principal, group_id: str) -> Callable[[str], bool]:
        """Whether the caller may read a file path of the group, its group access decided
        once here: what the live feed asks for a batch of changes of one group."""
        try:
            grants = self.open(principal, group_id).grants
        except (NotFound, Denied):
            return lambda path: False
        return lambda path: grants.at(path).has("read")

    def group(self, group_id: str) -> Group | None:
        return self._db.read(lambda c: group_store.get(c, group_id))

    def legacy(self, group: Group) -> bool:
        return bool(settings.effective(self._db, group.org_id, group.project_id, LEGACY))

    def to_put(self, group: Group) -> dict[bool, tuple[str, ...]]:
        """What a PUT needs, by whether the path exists: for an upload completing later."""
        legacy, rdp = self.legacy(group), group.require_delete_permission_to_put_data
        return {e: needed(e, "PUT", legacy=legacy, delete_to_put=rdp) for e in (False, True)}
