"""Questions about any account-like grantee (user, device, role) inside an organization."""

from __future__ import annotations

import apsw

from storage.rows import one


def kind_of(conn: apsw.Connection, org_id: str, grantee_id: str) -> str | None:
    """'user', 'device' or 'role' when the ID names one in this org; None otherwise."""
    row = one(
        conn,
        "SELECT 'user' AS kind FROM users WHERE id = ?1 AND org_id = ?2"
        " UNION ALL SELECT 'role' FROM roles WHERE id = ?1 AND org_id = ?2",
        (grantee_id, org_id),
    )
    return None if row is None else str(row["kind"])
