"""What an organization holds, counted for its admins' overview (GET /v2/summary):
data entries, files and their bytes, open tunnels. One count each, by the org's indexes."""

from __future__ import annotations

from dataclasses import dataclass

from storage.rows import Tx, scalar


@dataclass(frozen=True, slots=True)
class OrgContent:
    data_entries: int
    files: int
    file_bytes: int
    open_tunnels: int


def org_content(conn: Tx, org_id: str, now_iso: str) -> OrgContent:
    """The org's data, files and open tunnels (open: not closed and not yet expired)."""
    entries = scalar(
        conn,
        "SELECT count(*) FROM data WHERE group_id IN (SELECT id FROM groups WHERE org_id = ?)",
        (org_id,),
    )
    files = scalar(conn, "SELECT count(*) FROM files WHERE org_id = ?", (org_id,))
    size = scalar(conn, "SELECT coalesce(sum(size), 0) FROM files WHERE org_id = ?", (org_id,))
    tunnels = scalar(
        conn,
        "SELECT count(*) FROM tunnels WHERE org_id = ? AND closed_date IS NULL"
        " AND expires_date > ?",
        (org_id, now_iso),
    )
    return OrgContent(int(entries or 0), int(files), int(size), int(tunnels or 0))
