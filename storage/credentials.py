"""Passwords of users, and the auth epoch that invalidates cached principals everywhere."""

from __future__ import annotations

import apsw

from storage.rows import scalar


def set_password(conn: apsw.Connection, user_id: str, password_hash: str, now_iso: str) -> bool:
    """A new permanent password: the temporary-password flags are cleared with it."""
    conn.execute(
        "UPDATE users SET password_hash = ?, password_last_changed = ?,"
        " has_temporary_password = 0, new_password_required = 0, last_updated_date = ?"
        " WHERE id = ?",
        (password_hash, now_iso, now_iso, user_id),
    )
    return conn.changes() == 1


def set_temporary_password(
    conn: apsw.Connection, user_id: str, password_hash: str, now_iso: str
) -> None:
    """A fresh temporary password for a user who never chose one (a re-sent invitation)."""
    conn.execute(
        "UPDATE users SET password_hash = ?, password_last_changed = ?,"
        " has_temporary_password = 1, new_password_required = 1 WHERE id = ?",
        (password_hash, now_iso, user_id),
    )


def auth_epoch(conn: apsw.Connection) -> int:
    """Bumped by triggers (migration 0006) whenever a cached principal may have gone stale."""
    return int(scalar(conn, "SELECT value FROM auth_epoch WHERE id = 1") or 0)


def bump_auth_epoch(conn: apsw.Connection) -> None:
    conn.execute("UPDATE auth_epoch SET value = value + 1 WHERE id = 1")


def set_staff_password(
    conn: apsw.Connection, staff_id: str, password_hash: str, now_iso: str
) -> None:
    conn.execute(
        "UPDATE staff SET password_hash = ?, password_last_changed = ?, last_updated_date = ?"
        " WHERE id = ?",
        (password_hash, now_iso, now_iso, staff_id),
    )


def forget_reset_tokens(conn: apsw.Connection, user_id: str) -> None:
    """A password just changed: outstanding reset tokens of the user are void."""
    conn.execute("DELETE FROM reset_tokens WHERE user_id = ?", (user_id,))


def set_by_operator(conn: apsw.Connection, user_id: str, password_hash: str, now_iso: str) -> None:
    """A password the operator chose (`edge admin reset-password`): temporary, so the user
    chooses their own at the next sign-in; outstanding reset tokens are void."""
    set_temporary_password(conn, user_id, password_hash, now_iso)
    forget_reset_tokens(conn, user_id)
