"""MFA factors of users: encrypted TOTP secrets, hashed recovery and SMS codes."""

from __future__ import annotations

import apsw

from storage.rows import Row, one, update


def get(conn: apsw.Connection, user_id: str, kind: str) -> Row | None:
    sql = "SELECT * FROM mfa_factors WHERE user_id = ? AND kind = ?"
    return one(conn, sql, (user_id, kind))


def put(conn: apsw.Connection, user_id: str, kind: str, values: Row, now: str) -> None:
    """Create the factor row if missing, then set the given columns."""
    conn.execute(
        "INSERT OR IGNORE INTO mfa_factors (user_id, kind, created_date) VALUES (?, ?, ?)",
        (user_id, kind, now),
    )
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    if assignments:
        conn.execute(
            f"UPDATE mfa_factors SET {assignments} WHERE user_id = :__u AND kind = :__k",
            {**values, "__u": user_id, "__k": kind},
        )


def accept_totp_step(conn: apsw.Connection, user_id: str, step: int) -> bool:
    """Record `step` as the last accepted TOTP step unless it is not newer than the last
    one; False when it is not (the code was already used, or is older than one used)."""
    conn.execute(
        "UPDATE mfa_factors SET last_totp_step = ?1 WHERE user_id = ?2 AND kind = 'software'"
        " AND (last_totp_step IS NULL OR last_totp_step < ?1)",
        (step, user_id),
    )
    return bool(conn.changes())


def delete(conn: apsw.Connection, user_id: str, kind: str) -> None:
    conn.execute("DELETE FROM mfa_factors WHERE user_id = ? AND kind = ?", (user_id, kind))


def set_user(conn: apsw.Connection, user_id: str, values: Row) -> None:
    """The MFA columns of the users row (enabled flags, preference, phone)."""
    update(conn, "users", "id", user_id, values)


def any_secret(conn: apsw.Connection) -> str | None:
    """One encrypted TOTP secret (set up or pending), to prove the key still opens them."""
    sql = (
        "SELECT coalesce(secret_enc, pending_enc) FROM mfa_factors"
        " WHERE coalesce(secret_enc, pending_enc) IS NOT NULL LIMIT 1"
    )
    found = conn.execute(sql).fetchone()
    return None if found is None else str(found[0])
