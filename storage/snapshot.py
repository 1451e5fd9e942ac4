"""Consistent copies of a live database (SQLite's online backup API) and integrity checks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import apsw

from storage import migrate
from storage.pragmas import configure

Progress = Callable[[int, int], None]  # pages copied, pages in all
T = TypeVar("T")
PAGES_PER_STEP = 256


def copy_database(source: Path, target: Path, progress: Progress | None = None) -> None:
    """Copy a database that may be in use, page by page, into a new file.

    Writers may keep committing while it runs; SQLite restarts the copy of changed pages,
    so the result is one consistent snapshot.
    """
    src = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    dst = apsw.Connection(str(target))
    try:
        src.set_busy_timeout(5000)
        with dst.backup("main", src, "main") as backup:
            while not backup.done:
                backup.step(PAGES_PER_STEP)
                if progress:
                    progress(backup.pagecount - backup.remaining, backup.pagecount)
        dst.execute("PRAGMA journal_mode = DELETE")
    finally:
        dst.close()
        src.close()


def integrity_problems(path: Path) -> list[str]:
    """What `PRAGMA integrity_check` and `foreign_key_check` find; empty when sound."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        problems = [] if rows == ["ok"] else [str(r) for r in rows]
        for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check").fetchall():
            problems.append(f"{table} row {rowid} points at a missing {parent} row")
        return problems
    except apsw.Error as exc:
        return [f"the database cannot be read: {exc}"]
    finally:
        conn.close()


class Unreadable(Exception):
    """The file is not a database SQLite can read."""


def schema_version(path: Path) -> int:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return migrate.current_version(conn)
    except apsw.Error as exc:
        raise Unreadable(str(exc)) from None
    finally:
        conn.close()


class Reading:
    """A read-only connection, opened at the first read and shared by the reads after it,
    for a caller that asks several things (`read` opens one a call, a few milliseconds
    each: SQLite reads the schema anew). Unreadable as `read`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: apsw.Connection | None = None

    def read(self, fn: Callable[[apsw.Connection], T]) -> T:
        try:
            if self._conn is None:
                self._conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READONLY)
                self._conn.set_busy_timeout(5000)
            return fn(self._conn)
        except apsw.Error as exc:
            raise Unreadable(str(exc)) from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def read(path: Path, fn: Callable[[apsw.Connection], T]) -> T:
    """Run a query function on a read-only connection of its own (for `edge check`, which
    may run beside a server). Unreadable when the database (or the table) is not there."""
    reading = Reading(path)
    try:
        return reading.read(fn)
    finally:
        reading.close()


def checkpoint(path: Path) -> None:
    """Fold the WAL into the database file (after a restore, before the first start)."""
    conn = apsw.Connection(str(path))
    try:
        configure(conn, writer=True)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
