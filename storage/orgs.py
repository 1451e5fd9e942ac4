"""Organizations."""

from __future__ import annotations

from storage.access import bump_epoch
from storage.listing import Field, Table, common_fields
from storage.records import ORGS, Org
from storage.rows import Tx, insert_record, record, update_record


def create(conn: Tx, value: Org) -> None:
    insert_record(conn, ORGS, value)


def get(conn: Tx, org_id: str) -> Org | None:
    return record(conn, ORGS, "id = ?", (org_id,))


def patch(conn: Tx, org_id: str, changes: dict[str, object]) -> bool:
    """Callers keep their org's settings (edge/access/engine.py): a change ends them."""
    bump_epoch(conn)
    return update_record(conn, ORGS, org_id, changes)


def delete(conn: Tx, org_id: str) -> bool:
    conn.execute("DELETE FROM aliases WHERE owner_id = ?", (org_id,))
    conn.execute("DELETE FROM orgs WHERE id = ?", (org_id,))
    deleted = conn.changes() == 1
    bump_epoch(conn)
    return deleted


def _column(kind: str, name: str, folded: bool = False) -> Field:
    sql = f"orgs.{name}"
    return Field(kind, sql, True, f"{sql}_folded" if folded else None, not_null=folded)


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
    codec=ORGS,
)
