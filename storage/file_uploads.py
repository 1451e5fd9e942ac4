"""Upload sessions and the parts received for them (the bytes of a part are in
`uploads/<upload id>/`, storage/blobs.py). Sessions live in the database, not in a
process's memory, so any worker process can take a part or complete an upload."""

from __future__ import annotations

from collections.abc import Sequence

from storage.records import FILE_UPLOADS, UPLOAD_PARTS, FileUpload, UploadPart
from storage.rows import Tx, insert_record, record, records, scalar


def create(conn: Tx, upload: FileUpload) -> None:
    insert_record(conn, FILE_UPLOADS, upload)


def get(conn: Tx, upload_id: str) -> FileUpload | None:
    return record(conn, FILE_UPLOADS, "id = ?", (upload_id,))


def delete(conn: Tx, upload_id: str) -> bool:
    conn.execute("DELETE FROM file_uploads WHERE id = ?", (upload_id,))
    return conn.changes() == 1


def parts(conn: Tx, upload_id: str) -> list[UploadPart]:
    return records(
        conn,
        UPLOAD_PARTS,
        f"SELECT {UPLOAD_PARTS.select} FROM file_upload_parts WHERE upload_id = ?"
        " ORDER BY part_number",
        (upload_id,),
    )


def put_part(conn: Tx, part: UploadPart) -> str | None:
    """Record a received part; returns the file of the part it replaces, if any."""
    before = scalar(
        conn,
        "SELECT file FROM file_upload_parts WHERE upload_id = ? AND part_number = ?",
        (part.upload_id, part.part_number),
    )
    conn.execute(
        "INSERT OR REPLACE INTO file_upload_parts (upload_id, part_number, file, size, md5)"
        " VALUES (?, ?, ?, ?, ?)",
        (part.upload_id, part.part_number, part.file, part.size, part.md5),
    )
    return None if before is None else str(before)


def pending_bytes(conn: Tx, group_id: str | None) -> int:
    """Bytes of parts waiting for their uploads to complete: in one group, or in all."""
    sql = "SELECT sum(p.size) FROM file_upload_parts p JOIN file_uploads u ON u.id = p.upload_id"
    if group_id is None:
        return int(scalar(conn, sql) or 0)
    return int(scalar(conn, sql + " WHERE u.group_id = ?", (group_id,)) or 0)


def expired(conn: Tx, before: str, limit: int = 1000) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM file_uploads WHERE expires < ? ORDER BY expires LIMIT ?", (before, limit)
    )
    return [str(r[0]) for r in rows]


def delete_many(conn: Tx, upload_ids: Sequence[str]) -> None:
    conn.executemany("DELETE FROM file_uploads WHERE id = ?", [(i,) for i in upload_ids])


def existing(conn: Tx, upload_ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(upload_ids), 500):
        batch = upload_ids[start : start + 500]
        marks = ", ".join("?" for _ in batch)
        rows = conn.execute(f"SELECT id FROM file_uploads WHERE id IN ({marks})", batch)
        found.update(str(r[0]) for r in rows)
    return found
