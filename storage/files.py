"""The file index: one row per file of a group, and the blobs that hold its bytes in order
(storage/blobs.py): one, or one per part of a multipart file.

Rows are written only once their blobs are in place, and a blob whose row goes (its file
deleted or overwritten, its group or org erased) is queued in `file_blobs_gone` by trigger
inside the same transaction, so no row names a missing blob. Paths are compared on whole
segments through index ranges (`/a` covers `/a` and `/a/...`, never `/ab`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import apsw

from storage.listing import EVERYTHING, NOTHING, Field, Scope, Table
from storage.records import FILE_BLOBS, FILES, FileBlob, FileEntry
from storage.rows import Tx, insert_record, record, records, scalar, update_record

BATCH = 500  # names per IN (...) probe
_PATH = "files.path"


def get(conn: Tx, group_id: str, path: str) -> FileEntry | None:
    return record(conn, FILES, "group_id = ? AND path = ?", (group_id, path))


def create(conn: Tx, entry: FileEntry, blobs: Sequence[tuple[str, int]]) -> None:
    """A new file and its blobs, in order: `(blob name, size)`."""
    insert_record(conn, FILES, entry)
    _put_blobs(conn, entry.id, blobs)


def replace(
    conn: Tx, file_id: str, changes: dict[str, Any], blobs: Sequence[tuple[str, int]] = ()
) -> bool:
    """Change the named columns of one file; with `blobs`, its bytes too (the old blobs
    are queued to be unlinked)."""
    if not update_record(conn, FILES, file_id, changes):
        return False
    if blobs:
        conn.execute("DELETE FROM file_blobs WHERE file_id = ?", (file_id,))
        _put_blobs(conn, file_id, blobs)
    return True


def with_blobs(conn: Tx, group_id: str, path: str) -> tuple[FileEntry, list[FileBlob]] | None:
    """A file and its blobs in one statement: one snapshot, so an overwrite committed in
    between cannot pair one version's entry with another's bytes."""
    rows = conn.execute(
        f"SELECT {FILES.select}, {FILE_BLOBS.select} FROM files"
        " JOIN file_blobs ON file_blobs.file_id = files.id"
        " WHERE files.group_id = ? AND files.path = ? ORDER BY file_blobs.seq",
        (group_id, path),
    ).fetchall()
    if not rows:
        return None
    split = len(FILES.columns)
    return FILES.decode(rows[0][:split]), [FILE_BLOBS.decode(r[split:]) for r in rows]


def blobs_of(conn: Tx, file_id: str) -> list[FileBlob]:
    sql = f"SELECT {FILE_BLOBS.select} FROM file_blobs WHERE file_id = ? ORDER BY seq"
    return records(conn, FILE_BLOBS, sql, (file_id,))


def _put_blobs(conn: Tx, file_id: str, blobs: Sequence[tuple[str, int]]) -> None:
    conn.executemany(
        "INSERT INTO file_blobs (blob, file_id, seq, size) VALUES (?, ?, ?, ?)",
        [(blob, file_id, seq, size) for seq, (blob, size) in enumerate(blobs, 1)],
    )


def delete(conn: Tx, group_id: str, path: str) -> bool:
    conn.execute("DELETE FROM files WHERE group_id = ? AND path = ?", (group_id, path))
    return conn.changes() == 1


def delete_subtree(conn: Tx, group_id: str, path: str) -> int:
    sql, params = subtree(group_id, path)
    conn.execute(f"DELETE FROM files WHERE {sql}", params)
    return conn.changes()


def erase_groups(conn: Tx, group_ids: Sequence[str]) -> None:
    """Everything files hold for erased groups: rows (their blobs queue up by trigger),
    usage counters and upload sessions."""
    for group_id in group_ids:
        conn.execute("DELETE FROM files WHERE group_id = ?", (group_id,))
        conn.execute("DELETE FROM file_uploads WHERE group_id = ?", (group_id,))
        conn.execute("DELETE FROM file_usage WHERE scope = ?", (group_id,))


# -- subtrees and permissions, as SQL -----------------------------------------------------
def covering(path: str, column: str = _PATH) -> tuple[str, tuple[str, ...]]:
    """`column` is the path or below it, as two index ranges ('/' sorts just before '0')."""
    if path == "/":
        return "1", ()
    return f"({column} = ? OR ({column} >= ? AND {column} < ?))", (path, path + "/", path + "0")


def subtree(group_id: str, path: str) -> Scope:
    below, params = covering(path)
    return Scope(f"files.group_id = ? AND {below}", (group_id, *params))


def permitted(rules: Sequence[tuple[str, bool]], default: bool) -> Scope:
    """Rows where a path right holds: the longest grant path covering a row decides
    (`rules` longest first, from edge/access/paths.py), else `default`."""
    if not rules:
        return EVERYTHING if default else NOTHING
    cases: list[str] = []
    params: list[str] = []
    for grant, allowed in rules:
        sql, found = covering(grant)
        cases.append(f"WHEN {sql} THEN {int(allowed)}")
        params.extend(found)
    return Scope(f"(CASE {' '.join(cases)} ELSE {int(default)} END) = 1", tuple(params))


def window(scope: Scope, after: tuple[Any, str] | None, desc: bool, cap: int) -> Scope:
    """At most `cap` rows of the scope in path order past `after`: the raw items a filtered
    scan may read for one page (the path-filter scan cap)."""
    sql, found = _window_select("files.rowid", scope, after, desc, cap)
    return Scope(f"files.rowid IN ({sql})", found)


def window_end(
    conn: Tx, scope: Scope, after: tuple[Any, str] | None, desc: bool, cap: int
) -> tuple[int, tuple[str, str] | None]:
    """How many rows the window holds, and its last (path, id): where the next scan starts."""
    sql, found = _window_select("files.path, files.id", scope, after, desc, cap)
    rows = conn.execute(sql, found).fetchall()
    return len(rows), ((str(rows[-1][0]), str(rows[-1][1])) if rows else None)


def _window_select(
    columns: str, scope: Scope, after: tuple[Any, str] | None, desc: bool, cap: int
) -> tuple[str, tuple[Any, ...]]:
    direction = "DESC" if desc else "ASC"
    where, found = scope
    if after is not None:
        where += f" AND (files.path, files.id) {'<' if desc else '>'} (?, ?)"
        found = (*found, *after)
    sql = (
        f"SELECT {columns} FROM files WHERE {where}"
        f" ORDER BY files.path {direction}, files.id {direction} LIMIT ?"
    )
    return sql, (*found, cap)


# -- usage (quotas) -----------------------------------------------------------------------
TOTAL = "*"


def usage(conn: Tx, scope: str) -> int:
    """Bytes held by a group's files, or by every file (`TOTAL`)."""
    return int(scalar(conn, "SELECT bytes FROM file_usage WHERE scope = ?", (scope,)) or 0)


# -- blobs whose rows are gone ------------------------------------------------------------
def gone(conn: Tx, limit: int = 1000) -> list[str]:
    rows = conn.execute("SELECT blob FROM file_blobs_gone LIMIT ?", (limit,))
    return [str(r[0]) for r in rows]


def forget_gone(conn: Tx, blobs: Iterable[str]) -> None:
    conn.executemany("DELETE FROM file_blobs_gone WHERE blob = ?", [(b,) for b in blobs])


def known(conn: Tx, names: Sequence[str]) -> set[str]:
    """The blob names a row names, or that wait in `file_blobs_gone` (not orphans)."""
    found: set[str] = set()
    for start in range(0, len(names), BATCH):
        batch = names[start : start + BATCH]
        marks = ", ".join("?" for _ in batch)
        sql = (
            f"SELECT blob FROM file_blobs WHERE blob IN ({marks})"
            f" UNION SELECT blob FROM file_blobs_gone WHERE blob IN ({marks})"
        )
        found.update(str(r[0]) for r in conn.execute(sql, (*batch, *batch)))
    return found


def blobs_in_snapshot(database: Path) -> list[str]:
    """The blobs a database copy names (a backup copies exactly these)."""
    conn = apsw.Connection(str(database), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [str(r[0]) for r in conn.execute("SELECT blob FROM file_blobs ORDER BY blob")]
    finally:
        conn.close()


# -- the list engine's description --------------------------------------------------------
def _field(kind: str, name: str, *, not_null: bool = False) -> Field:
    return Field(kind, f"files.{name}", True, not_null=not_null)


LIST = Table(
    "files",
    {
        "id": _field("id", "id", not_null=True),
        "path": _field("text", "path", not_null=True),
        "filename": _field("text", "filename"),
        "etag": _field("text", "etag"),
        "content_type": _field("text", "content_type"),
        "size": _field("number", "size"),
        "uploaded_date": _field("datetime", "uploaded_date"),
        "created_date": _field("datetime", "created_date", not_null=True),
        "created_by": _field("id", "created_by"),
        "last_updated_date": _field("datetime", "last_updated_date", not_null=True),
        "last_updated_by": _field("id", "last_updated_by"),
        # Index fields compare as written (eq, sw, contains, gte, lte): the engine's typed
        # comparisons ("json" kind) serve a plain text column as they serve attributes.
        **{f"unicode_{n}": _field("json", f"unicode_{n}") for n in range(1, 7)},
        **{f"number_{n}": _field("number", f"number_{n}") for n in range(1, 3)},
    },
    codec=FILES,
    # `search` looks in the path (each of its names), the file name and the text index
    # fields (migration 0036): what data's search looks in, for data.
    fts="files_fts",
    fts_columns=("path", "filename", *(f"unicode_{n}" for n in range(1, 7))),
)
