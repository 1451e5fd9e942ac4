"""The membership filters of the user and device lists (`?group_id=&is_group_admin=`...),
read once for both kinds: both build edge/accounts/lists.py's `Filters`."""

from __future__ import annotations

from api import params
from edge.accounts.lists import Filters

EXTRAS = ("group_id", "project_id", "role_id", "is_group_admin", "is_project_admin")


def filters(extras: dict[str, str]) -> Filters:
    """`exclude_admins` is the users list's alone; absent, it is false."""

    def optional_flag(name: str) -> bool | None:
        return params.boolean(name, extras[name]) if name in extras else None

    return Filters(
        group_id=extras.get("group_id") or None,
        project_id=extras.get("project_id") or None,
        role_id=extras.get("role_id") or None,
        is_group_admin=optional_flag("is_group_admin"),
        is_project_admin=optional_flag("is_project_admin"),
        exclude_admins=params.flag(extras, "exclude_admins"),
    )
