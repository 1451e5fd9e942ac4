"""Provisioning claims (docs/provisioning.md): the rows, the list admins read, and the one
statement that spends a use, so that two devices racing for the last use cannot both win."""

from __future__ import annotations

from typing import Any

from storage.listing import Table, column, org_and_projects
from storage.records import CLAIMS, Claim
from storage.rows import Tx, insert_record, record

_T = "provisioning_claims"
LIST = Table(
    _T,
    {
        "id": column(_T, "id", "id", not_null=True),
        "name": column(_T, "text", "name", not_null=True),
        "project_id": column(_T, "id", "project_id"),
        "max_uses": column(_T, "number", "max_uses", not_null=True),
        "uses": column(_T, "number", "uses", not_null=True),
        "expires_date": column(_T, "datetime", "expires_date", not_null=True),
        "last_used_date": column(_T, "datetime", "last_used_date"),
        "revoked_date": column(_T, "datetime", "revoked_date"),
        "created_date": column(_T, "datetime", "created_date", not_null=True),
        "created_by": column(_T, "id", "created_by"),
    },
    codec=CLAIMS,
    fts=f"{_T}_fts",  # a claim's name (migration 0036)
    fts_columns=("name",),
)


def create(conn: Tx, claim: Claim) -> None:
    insert_record(conn, CLAIMS, claim)


def get(conn: Tx, claim_id: str) -> Claim | None:
    return record(conn, CLAIMS, "id = ?", (claim_id,))


def revoke(conn: Tx, claim_id: str, now_iso: str, actor: str) -> bool:
    """Revoke a claim not yet revoked; False when it was already (its first date stays)."""
    conn.execute(
        f"UPDATE {_T} SET revoked_date = ?, revoked_by = ? WHERE id = ? AND revoked_date IS NULL",
        (now_iso, actor, claim_id),
    )
    return conn.changes() == 1


def use(conn: Tx, claim_id: str, now_iso: str) -> bool:
    """Spend one use of a claim still usable at `now_iso` (not revoked, not expired, not
    used up); False when it is not. The check and the count are one statement."""
    conn.execute(
        f"UPDATE {_T} SET uses = uses + 1, last_used_date = ?1"
        " WHERE id = ?2 AND revoked_date IS NULL AND uses < max_uses AND expires_date > ?1",
        (now_iso, claim_id),
    )
    return conn.changes() == 1


def visible(
    org_id: str, project_scope: str | None, projects: list[str] | None
) -> tuple[str, tuple[Any, ...]]:
    """List scope: storage/listing.py `org_and_projects`."""
    return org_and_projects("provisioning_claims", org_id, project_scope, projects)
