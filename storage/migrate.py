"""Numbered migrations: `storage/migrations/NNNN_name.sql`, applied in order at start.

All pending migrations run in one transaction and are recorded in `schema_migrations`,
so a failed upgrade leaves the database exactly as it was and names the failing file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import apsw

from storage.pragmas import configure

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class MigrationFailed(Exception):
    def __init__(self, name: str, cause: BaseException) -> None:
        super().__init__(f"migration {name} failed: {cause}")
        self.name = name


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def available() -> list[Migration]:
    return list(_shipped())


@cache
def _shipped() -> tuple[Migration, ...]:
    """The migrations folder, listed and read once a process: it is part of the program and
    does not change while it runs (a test opens thousands of sites, each asking again)."""
    found = []
    for entry in resources.files("storage.migrations").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), entry.name, entry.read_text("utf-8")))
    return tuple(sorted(found, key=lambda m: m.version))


def latest_version() -> int:
    return available()[-1].version


def current_version(conn: apsw.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0) if row else 0


Before = Callable[[int, int], object]  # (the database's version, the version it will reach)


def apply_pending(
    path: Path, *, upto: int | None = None, before: Before | None = None
) -> list[str]:
    """Apply every migration newer than the database's version (or up to `upto`), first
    calling `before` when there is one to apply (storage/database.py copies the database
    there): the version is read once, on the connection that migrates."""
    conn = apsw.Connection(str(path))
    try:
        configure(conn, writer=True)
        return _apply(conn, upto, before)
    finally:
        conn.close()


def _apply(conn: apsw.Connection, upto: int | None, before: Before | None = None) -> list[str]:
    version = current_version(conn)
    pending = [
        m for m in available() if m.version > version and (upto is None or m.version <= upto)
    ]
    if not pending:
        return []
    if before is not None:
        before(version, pending[-1].version)
    conn.execute("BEGIN IMMEDIATE")
    try:
        _ensure_table(conn)
        for migration in pending:
            _run(conn, migration)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return [m.name for m in pending]


def _ensure_table(conn: apsw.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"
    )


def _run(conn: apsw.Connection, migration: Migration) -> None:
    try:
        conn.execute(migration.sql)
    except apsw.Error as exc:
        raise MigrationFailed(migration.name, exc) from exc
    conn.execute(
        "INSERT INTO schema_migrations(version, name) VALUES (?, ?)",
        (migration.version, migration.name),
    )
