"""What differs between the kinds of account (users, devices), and what every account has.

The shared flow (standing, views, rules, writes, lists, the service) asks a kind only
what differs; the user kind lives in `users.py`, the device kind in `devices.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from edge.devices.topics import Placed
from edge.kernel.listing import Table
from storage.listing import Scope

Row = dict[str, Any]


class Account(Placed, Protocol):
    """What every account record has (storage/records.py `User` and `Device`): where it is
    placed, as a device's topics need it, and whether it is active."""

    @property
    def is_active(self) -> bool: ...

    @property
    def is_delete_protected(self) -> bool: ...

    @property
    def created_date(self) -> str: ...

    @property
    def last_updated_date(self) -> str: ...


@dataclass(frozen=True)
class Relation:
    """The caller towards one account. `admin`: sees admin-only fields, sets restricted
    attributes (and a device's `iot_scopes` and `is_active`), may force a delete.
    `is_owner`: the caller owns the device (never so for a user)."""

    is_self: bool
    is_owner: bool
    admin: bool
    read: bool
    update: bool
    delete: bool


A = TypeVar("A", bound=Account)
A_contra = TypeVar("A_contra", bound=Account, contravariant=True)


class Kind(Protocol[A_contra]):
    # 'user' or 'device': the principal's kind, the permission block (`user_permissions`,
    # `device_permissions`), and the kind the audit log and the trash name.
    name: str
    noun: str  # 'User' or 'Device', as messages name it
    # Whether an admin over the account may always update and delete it (devices, so an
    # owner the settings make its admin too); a user's update and delete also ask for reach.
    # Neither kind is in the hand of an admin whose reach does not cover all it administers.
    admin_acts: bool
    listing: Table  # its list: the fields, the full-text and the JSON columns
    private: str  # what its anonymous view hides, as a refused filter names it

    def visible(self, account_id: str, grantees: Sequence[str]) -> Scope:
        """The rows of its list a caller who may not read them all sees (SQL)."""
        ...

    def hidden(self, names: set[str]) -> list[str]:
        """The filter and sort names that would reveal what its anonymous view hides."""
        ...

    def login(self, row: A_contra) -> str:
        """What the anonymous view shows as `username` (a device's name)."""
        ...

    def fields(self, row: A_contra, rel: Relation, extra: Row) -> Row:
        """The kind's own fields, as `rel` may see them (edge/accounts/views.py)."""
        ...
