"""Organizations."""

from __future__ import annotations

import apsw

from storage.listing import Field, Table, common_fields
from storage.rows import Row, insert, one, update

COLUMNS = (
    "id",
    "name",
    "name_folded",
    "alias",
    "description",
    "tags",
    "is_active",
    "is_delete_protected",
    "settings",
    "created_date",
    "created_by",
    "last_updated_date",
    "last_updated_by",
)


def create(conn: apsw.Connection, values: Row) -> None:
    insert(conn, "orgs", values)


def get(conn: apsw.Connection, org_id: str) -> Row | None:
    return one(conn, "SELECT * FROM orgs WHERE id = ?", (org_id,))


def patch(conn: apsw.Connection, org_id: str, values: Row) -> bool:
    return update(conn, "orgs", "id", org_id, values) == 1


def delete(conn: apsw.Connection, org_id: str) -> bool:
    conn.execute("DELETE FROM aliases WHERE owner_id = ?", (org_id,))
    conn.execute("DELETE FROM orgs WHERE id = ?", (org_id,))
    return conn.changes() == 1


def _column(kind: str, name: str, sortable: bool = True, folded: bool = False) -> Field:
    return Field(kind, f"orgs.{name}", sortable, f"orgs.{name}_folded" if folded else None)


def _setting(kind: str, name: str) -> Field:
    return Field(kind, f"json_extract(orgs.settings, '$.{name}')")


LIST = Table(
    "orgs",
    {
        **common_fields("orgs"),
        "name": _column("text", "name", folded=True),
        "alias": _column("text", "alias"),
        "description": _column("text", "description"),
        "mfa_required": _setting("bool", "mfa_required"),
        "default_locale": _setting("text", "default_locale"),
    },
    fts="orgs_fts",
    fts_columns=("name", "alias", "description", "tags"),
)
