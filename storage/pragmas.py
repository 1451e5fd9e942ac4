"""Every connection's pragmas, in one function, so readers and the writer cannot drift apart."""

from __future__ import annotations

import apsw

from storage.patterns import PatternTooSlow, regexp

BUSY_TIMEOUT_MS = 5000
WAL_SIZE_LIMIT = 64 << 20
# Each connection's page cache, at most (KiB). Set here, not left to the SQLite build: the
# server's SQLite memory is this times its connections (the writer, the checkpointer, the
# loop's reader and one per reading thread: storage/database.py), plus their statements.
CACHE_KIB = 2048
__all__ = ["BUSY_TIMEOUT_MS", "CACHE_KIB", "PatternTooSlow", "configure", "sqlite_memory"]


def configure(conn: apsw.Connection, *, writer: bool) -> None:
    """WAL, foreign keys, a busy timeout, a bounded page cache; the writer also turns off
    automatic checkpoints.

    Automatic checkpoints run inside an ordinary commit and cause the long write tail;
    the writer runs them itself in the background instead (see storage/writer.py).
    """
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA temp_store = MEMORY")
    # User-supplied patterns run against the request's time budget (storage/patterns.py).
    conn.create_scalar_function("regexp", regexp, 2, deterministic=True)
    if writer:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        # A WAL that a burst grew is cut back to this when it next starts over.
        conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
    else:
        conn.execute("PRAGMA query_only = ON")


def configure_checkpointer(conn: apsw.Connection) -> None:
    """The connection that checkpoints while the writer is busy: it reads and writes only
    the WAL's pages into the database file, and cuts the WAL back like the writer does."""
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")


def sqlite_memory() -> tuple[int, int]:
    """The bytes SQLite holds for this process (page caches, prepared statements, schemas)
    by its own count, and the most it has held: what the memory report shows beside RSS."""
    return apsw.memory_used(), apsw.memory_high_water()
