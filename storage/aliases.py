"""Installation-wide aliases shared by organizations and projects."""

from __future__ import annotations

import apsw

from storage.rows import Row, one


def claim(conn: apsw.Connection, alias_folded: str, kind: str, owner_id: str) -> bool:
    """Reserve an alias for its owner; False when another owner holds it."""
    holder = find(conn, alias_folded)
    if holder is not None:
        return bool(holder["owner_id"] == owner_id)
    conn.execute(
        "INSERT INTO aliases (alias_folded, owner_kind, owner_id) VALUES (?, ?, ?)",
        (alias_folded, kind, owner_id),
    )
    return True


def release_owner(conn: apsw.Connection, owner_id: str) -> None:
    conn.execute("DELETE FROM aliases WHERE owner_id = ?", (owner_id,))


def find(conn: apsw.Connection, alias_folded: str) -> Row | None:
    return one(conn, "SELECT * FROM aliases WHERE alias_folded = ?", (alias_folded,))
