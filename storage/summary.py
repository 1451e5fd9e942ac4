"""What an organization holds, counted for its admins' overview (GET /v2/summary):
data entries, files and their bytes, open tunnels. One count each, by the org's indexes
(files_by_org and tunnels_by_org_open, migration 0031): no count reads another org's rows."""

from __future__ import annotations

from dataclasses import dataclass

from storage.rows import Tx, one, scalar

DATA_ENTRIES = (
    "SELECT count(*) FROM data WHERE group_id IN (SELECT id FROM groups WHERE org_id = ?)"
)
# Count and bytes in one pass over the org's part of files_by_org (which holds the size).
FILES = "SELECT count(*) AS files, coalesce(sum(size), 0) AS bytes FROM files WHERE org_id = ?"
OPEN_TUNNELS = (
    "SELECT count(*) FROM tunnels WHERE org_id = ? AND closed_date IS NULL AND expires_date > ?"
)


@dataclass(frozen=True, slots=True)
class OrgContent:
    data_entries: int
    files: int
    file_bytes: int
    open_tunnels: int


def org_content(conn: Tx, org_id: str, now_iso: str) -> OrgContent:
    """The org's data, files and open tunnels (open: not closed and not yet expired)."""
    entries = scalar(conn, DATA_ENTRIES, (org_id,))
    files = one(conn, FILES, (org_id,)) or {"files": 0, "bytes": 0}
    tunnels = scalar(conn, OPEN_TUNNELS, (org_id, now_iso))
    return OrgContent(
        int(entries or 0), int(files["files"]), int(files["bytes"]), int(tunnels or 0)
    )
