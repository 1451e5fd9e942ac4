"""The group a data request names, and what the caller may do at each of its paths.

Rights come from the caller's data path grants (edge/access/paths.py, the one place the
path rules live): `read`, `write` (create a path), `update` (change an existing one; under
the legacy rule `can_write` stands for it) and `delete`. A caller who may not know the
group exists gets a 404, one who knows it but lacks a right a 403.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from edge.access.engine import Caller, Permissions
from edge.access.paths import PathGrants
from edge.access.standing import GroupStanding
from edge.errors import Denied, NotFound
from edge.principal import Principal
from storage import groups as group_store
from storage.database import Database
from storage.records import Group

LEGACY = "use_legacy_data_and_files_permissions"
DELETE_TO_PUT = "groups_require_delete_permission_to_put_data_by_default"
Settings = Callable[[str, str | None, tuple[str, ...]], dict[str, Any]]
MEMO_LIMIT = 1024  # groups remembered per caller
VERBS = {"read": "read", "write": "create", "update": "change", "delete": "delete"}


@dataclass(frozen=True)
class DataTarget:
    group: Group
    caller: Caller
    grants: PathGrants
    legacy: bool = False
    delete_to_put: bool = False
    delete_to_put_by_default: bool = False  # the org's (or project's) setting

    @property
    def group_id(self) -> str:
        return self.group.id

    def require(self, path: str, rights: Sequence[str]) -> None:
        held = self.grants.at(path)
        for right in rights:
            if not held.has(right):
                self.refuse(f"Not permitted to {VERBS[right]} data at {path}")

    def refuse(self, message: str) -> None:
        """403 when the caller knows the group, else 404 (as if it did not exist)."""
        if GroupStanding(self.caller, self.group).sees():
            raise Denied(message)
        raise NotFound("Group not found")


class Targets:
    def __init__(self, db: Database, permissions: Permissions, settings: Settings) -> None:
        self._db = db
        self._permissions = permissions
        self._settings = settings
        self._seen: WeakKeyDictionary[Caller, dict[str, Group]] = WeakKeyDictionary()
        self._rules: WeakKeyDictionary[Caller, dict[str | None, tuple[bool, bool]]] = (
            WeakKeyDictionary()
        )

    def open(self, principal: Principal, group_id: str, *, writing: bool) -> DataTarget:
        """The group and the caller's grants in it; a write also reads the org's rules
        (legacy permissions, delete-to-put), which a read never needs. The group may be
        as this caller last saw it (see `_group`); a write reads the group's own data rules
        again in its transaction (edge/data/writes.py `EntryWrites.current`)."""
        if principal.org_id is None:
            raise Denied("Sign in to an organization first (staff: with a scope)")
        caller = self._permissions.caller(principal)
        group = self._group(caller, group_id)
        if group is None or group.org_id != principal.org_id:
            raise NotFound("Group not found")
        legacy = rdp = False
        by_default = False
        if writing:
            legacy, by_default = self._org_rules(caller, group)
            rdp = group.require_delete_permission_to_put_data or by_default
        grants = caller.path_grants(group.id, group.project_id, "data", legacy=legacy)
        return DataTarget(group, caller, grants, legacy, rdp, by_default)

    def _org_rules(self, caller: Caller, group: Group) -> tuple[bool, bool]:
        """The settings `LEGACY` and `DELETE_TO_PUT` where the group lives, as this caller
        last read them: changing an org's or a project's settings moves the access epoch,
        which replaces the caller, and with it this memo."""
        seen = self._rules.setdefault(caller, {})
        found = seen.get(group.project_id)
        if found is None:
            values = self._settings(group.org_id, group.project_id, (LEGACY, DELETE_TO_PUT))
            found = (bool(values[LEGACY]), bool(values[DELETE_TO_PUT]))
            if len(seen) < MEMO_LIMIT:
                seen[group.project_id] = found
        return found

    def _group(self, caller: Caller, group_id: str) -> Group | None:
        """The group as this caller last saw it: what access depends on (its org, project,
        state, existence) moves the access epoch, which replaces the caller, and with it
        this memo. Its data rules do not, so a write reads those in its transaction."""
        seen = self._seen.setdefault(caller, {})
        found = seen.get(group_id)
        if found is None:
            found = self._db.read(lambda c: group_store.get(c, group_id))
            if found is not None and len(seen) < MEMO_LIMIT:
                seen[group_id] = found
        return found
