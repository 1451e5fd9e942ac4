"""Which rows a caller may see in a list, decided inside the query.

Each builder returns a condition on one listed table (a `Scope`: SQL and its parameters),
to be ANDed into the list's scope for a caller who may not read the whole organization. The
caller is named by their grantee IDs: their own ID and the IDs of the active roles they
hold (a handful). Every test is a correlated EXISTS that probes the unique
(target_id, grantee_id) index for one listed row, so a page costs the same whether the
caller holds ten access objects or a hundred thousand, and the scan stops once the page
is full. These are the list-side twins of the point checks in edge/access/engine.py (see
docs/permissions.md); tests compare the two.
"""

from __future__ import annotations

from collections.abc import Sequence

from storage.access import marks
from storage.listing import Scope


def _flag(alias: str, resource: str, action: str) -> str:
    """An admin, or a CRUD block that allows `action` on `resource`."""
    block = f"json_extract({alias}.permissions, '$.{resource}_permissions.can_{action}')"
    return f"({alias}.is_admin = 1 OR {block} = 1)"


def _active(kind: str, alias: str) -> str:
    table = {"project": "projects", "group": "groups"}[kind]
    return f"(SELECT t.is_active FROM {table} t WHERE t.id = {alias}.target_id) = 1"


def holds(target: str, grantees: Sequence[str], kind: str, test: str = "1") -> Scope:
    """The caller holds active access of `kind` to the row `target` names, passing `test`
    (written for the alias `{a}`), the target being active."""
    a = "c"  # fixed aliases keep the SQL text stable, so SQLite reuses the prepared plan
    active = "" if kind in ("org", "role") else f" AND {_active(kind, a)}"
    sql = (
        f"EXISTS (SELECT 1 FROM access {a} WHERE {a}.target_id = {target}"
        f" AND {a}.grantee_id IN ({marks(grantees)}) AND {a}.kind = '{kind}'"
        f" AND {a}.is_active = 1 AND {test.format(a=a)}{active})"
    )
    return Scope(sql, tuple(grantees))


def _any(*scopes: Scope) -> Scope:
    """Rows any of the scopes lets through."""
    sql = " OR ".join(f"({s.sql})" for s in scopes)
    return Scope(f"({sql})", tuple(p for s in scopes for p in s.params))


def _reads(resource: str) -> str:
    return _flag("{a}", resource, "read")


def groups(grantees: Sequence[str]) -> Scope:
    """Groups of a project whose level lets the caller read groups; active groups whose
    own access lets the caller read them or makes them their admin."""
    by_project = holds("groups.project_id", grantees, "project", _reads("group"))
    own = holds("groups.id", grantees, "group", "({a}.can_read = 1 OR {a}.is_admin = 1)")
    return _any(by_project, Scope(f"groups.is_active = 1 AND {own.sql}", own.params))


def projects(grantees: Sequence[str]) -> Scope:
    """Active projects the caller administers or may read through their access."""
    own = holds("projects.id", grantees, "project", "({a}.can_read = 1 OR {a}.is_admin = 1)")
    return Scope(f"projects.is_active = 1 AND {own.sql}", own.params)


def _member_of_group_where(grantees: Sequence[str], resource: str, member: str) -> Scope:
    """`member` (a row's ID) holds access to an active group where the caller may read
    `resource`: through the group's own access (a block, or group admin), or as an
    admin of the group's project."""
    m = "m"
    by_group = holds(f"{m}.target_id", grantees, "group", _reads(resource))
    by_project = holds(
        f"(SELECT g.project_id FROM groups g WHERE g.id = {m}.target_id)",
        grantees,
        "project",
        "{a}.is_admin = 1",
    )
    test = _any(by_group, by_project)
    sql = (
        f"EXISTS (SELECT 1 FROM access {m} WHERE {m}.grantee_id = {member}"
        f" AND {m}.kind = 'group' AND {m}.is_active = 1"
        f" AND (SELECT g.is_active FROM groups g WHERE g.id = {m}.target_id) = 1 AND {test.sql})"
    )
    return Scope(sql, test.params)


def _member_of_project_where(grantees: Sequence[str], resource: str, member: str) -> Scope:
    """`member` holds active access to a project where the caller may read `resource`."""
    m = "m"
    test = holds(f"{m}.target_id", grantees, "project", _reads(resource))
    sql = (
        f"EXISTS (SELECT 1 FROM access {m} WHERE {m}.grantee_id = {member}"
        f" AND {m}.kind = 'project' AND {m}.is_active = 1 AND {test.sql})"
    )
    return Scope(sql, test.params)


def users(self_id: str, grantees: Sequence[str]) -> Scope:
    """Themselves; users of a project (home or access) whose level lets the caller read
    users; members of groups where the caller may read users or is an admin."""
    return _any(
        Scope("users.id = ?", (self_id,)),
        holds("users.project_id", grantees, "project", _reads("user")),
        _member_of_project_where(grantees, "user", "users.id"),
        _member_of_group_where(grantees, "user", "users.id"),
    )


def devices(self_id: str, grantees: Sequence[str]) -> Scope:
    """The device itself; the caller's own devices (owner); devices of a project (home or
    access) whose level lets the caller read devices; members of groups where the caller
    may read devices or is an admin. `device_permissions` act as `user_permissions` do."""
    return _any(
        Scope("devices.id = ? OR devices.owner_id = ?", (self_id, self_id)),
        holds("devices.project_id", grantees, "project", _reads("device")),
        _member_of_project_where(grantees, "device", "devices.id"),
        _member_of_group_where(grantees, "device", "devices.id"),
    )


def roles(self_id: str, grantees: Sequence[str]) -> Scope:
    """Roles of a project whose level lets the caller read roles; roles the caller holds
    with `can_read`; roles with access to a group where the caller may read roles or is
    an admin."""
    m = "m"
    by_group = holds(f"{m}.target_id", grantees, "group", _reads("role"))
    by_admin = holds(
        f"(SELECT g.project_id FROM groups g WHERE g.id = {m}.target_id)",
        grantees,
        "project",
        "{a}.is_admin = 1",
    )
    test = _any(by_group, by_admin)
    in_group = Scope(
        f"EXISTS (SELECT 1 FROM access {m} WHERE {m}.grantee_id = roles.id"
        f" AND {m}.kind = 'group' AND {test.sql})",
        test.params,
    )
    held = Scope(
        "EXISTS (SELECT 1 FROM access h WHERE h.target_id = roles.id AND h.grantee_id = ?"
        " AND h.kind = 'role' AND h.is_active = 1 AND h.can_read = 1)",
        (self_id,),
    )
    return _any(holds("roles.project_id", grantees, "project", _reads("role")), held, in_group)
