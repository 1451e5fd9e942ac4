"""Permissions held at one level (the org, one project, one group): the values the
permission engine merges and compares.

An access object carries admin status, `can_read` / `can_update` on its target, and CRUD
blocks per resource (`user_permissions`, ...). A caller's level on a target merges the
access they hold there directly and through their roles: any grant counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from storage.records import Access

RESOURCES = ("user", "device", "group", "role", "project")
ACTIONS = ("create", "read", "update", "delete")
BLOCKS = {r: f"{r}_permissions" for r in RESOURCES}
FLAGS = ("can_create", "can_read", "can_update", "can_delete")
# The permission blocks each kind of access carries (the interface's models).
BLOCKS_BY_KIND: dict[str, tuple[str, ...]] = {
    "org": ("user", "device", "role", "group", "project"),
    "project": ("user", "device", "group", "role"),
    "group": ("user", "device", "role"),
    "role": ("user", "device"),
}


@dataclass(frozen=True, slots=True)
class Crud:
    can_create: bool = False
    can_read: bool = False
    can_update: bool = False
    can_delete: bool = False

    def allows(self, action: str) -> bool:
        return bool(getattr(self, f"can_{action}"))

    def merge(self, other: Crud) -> Crud:
        return Crud(*(a or b for a, b in zip(self.flags(), other.flags(), strict=True)))

    def flags(self) -> tuple[bool, bool, bool, bool]:
        return (self.can_create, self.can_read, self.can_update, self.can_delete)

    def any(self) -> bool:
        return any(self.flags())

    def to_json(self) -> dict[str, bool]:
        return dict(zip(FLAGS, self.flags(), strict=True))

    @classmethod
    def from_json(cls, raw: Any) -> Crud:
        raw = raw if isinstance(raw, dict) else {}
        return cls(*(bool(raw.get(k, False)) for k in FLAGS))


def crud_json(raw: Any) -> dict[str, bool]:
    """A stored permission block as the interface shows it: the four flags, each a bool
    (what `Crud.from_json(raw).to_json()` gives, without building the Crud)."""
    if not isinstance(raw, dict):
        return dict.fromkeys(FLAGS, False)
    return {k: bool(raw.get(k, False)) for k in FLAGS}


NO_CRUD = Crud()
FULL_CRUD = Crud(True, True, True, True)


@dataclass(frozen=True, slots=True)
class Level:
    """What a caller holds on one target. `held`: some active access exists there."""

    is_admin: bool = False
    can_read: bool = False
    can_update: bool = False
    blocks: Mapping[str, Crud] = field(default_factory=dict)
    held: bool = False

    def allows(self, resource: str, action: str) -> bool:
        return self.is_admin or self.blocks.get(resource, NO_CRUD).allows(action)

    def holds_anything(self) -> bool:
        return (
            self.is_admin
            or self.can_read
            or self.can_update
            or any(crud.any() for crud in self.blocks.values())
        )

    def merge(self, other: Level) -> Level:
        names = set(self.blocks) | set(other.blocks)
        return Level(
            self.is_admin or other.is_admin,
            self.can_read or other.can_read,
            self.can_update or other.can_update,
            {n: self.blocks.get(n, NO_CRUD).merge(other.blocks.get(n, NO_CRUD)) for n in names},
            self.held or other.held,
        )

    @classmethod
    def of(cls, access: Access) -> Level:
        raw = access.permissions
        blocks = {r: Crud.from_json(raw.get(BLOCKS[r])) for r in RESOURCES if BLOCKS[r] in raw}
        return cls(access.is_admin, access.can_read, access.can_update, blocks, True)

    @classmethod
    def merged(cls, grants: Iterable[Access]) -> Level:
        out = NO_LEVEL
        for access in grants:
            out = out.merge(cls.of(access))
        return out


NO_LEVEL = Level()
ADMIN_LEVEL = Level(True, True, True, {r: FULL_CRUD for r in RESOURCES}, True)
