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
from edge.access.paths import PathGrants, Rights
from edge.access.standing import GroupStanding
from edge.kernel.errors import Denied, NotFound
from edge.kernel.principal import Principal
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
    everywhere: Rights | None = None  # the rights at every path, when they do not vary

    @property
    def group_id(self) -> str:
        return self.group.id

    def require(self, path: str, rights: Sequence[str]) -> None:
        held = self.everywhere if self.everywhere is not None else self.grants.at(path)
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
        self._targets: WeakKeyDictionary[Caller, dict[tuple[str, bool], DataTarget]] = (
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
        seen = self._targets.get(caller)
        if seen is None:
            seen = self._targets[caller] = {}
        found = seen.get((group_id, writing))
        if found is None:
            found = self._open(caller, principal, group_id, writing)
            if len(seen) < MEMO_LIMIT:
                seen[(group_id, writing)] = found
        return found

    def _open(
        self, caller: Caller, principal: Principal, group_id: str, writing: bool
    ) -> DataTarget:
        """A target as `open` remembers it for this caller: everything in it moves the
        access epoch when it changes (which replaces the caller), but for the group's data
        rules, which a write reads again in its transaction."""
        group = self._group(caller, group_id)
        if group is None or group.org_id != principal.org_id:
            raise NotFound("Group not found")
        legacy = rdp = False
        by_default = False
        if writing:
            legacy, by_default = self._org_rules(caller, group)
            rdp = group.require_delete_permission_to_put_data or by_default
        grants = caller.path_grants(group.id, group.project_id, "data", legacy=legacy)
        return DataTarget(group, caller, grants, legacy, rdp, by_default, _everywhere(grants))

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


def _everywhere(grants: PathGrants) -> Rights | None:
    """The caller's rights at every path of the group when no grant names a path below
    `/` (the usual device: one grant on the whole group): then no path needs its own check."""
    if grants.admin or all(set(paths) <= {"/"} for paths in grants.grants):
        return grants.at("/")
    return None
