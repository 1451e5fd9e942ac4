"""Every connection's pragmas, in one function, so readers and the writer cannot drift apart."""

from __future__ import annotations

from typing import Any

import apsw
import regex

BUSY_TIMEOUT_MS = 5000
# User-supplied patterns run with a time limit, so a catastrophic one cannot hold a thread.
REGEX_TIMEOUT_SECONDS = 0.05


class PatternTooSlow(Exception):
    """A user-supplied regular expression ran past its time limit."""


def _regexp(*args: Any) -> int:
    pattern, value = args
    if value is None:
        return 0
    try:
        return int(
            regex.search(str(pattern), str(value), timeout=REGEX_TIMEOUT_SECONDS) is not None
        )
    except TimeoutError:
        raise PatternTooSlow(str(pattern)) from None


def configure(conn: apsw.Connection, *, writer: bool) -> None:
    """WAL, foreign keys, a busy timeout; the writer also turns off automatic checkpoints.

    Automatic checkpoints run inside an ordinary commit and cause the long write tail;
    the writer runs them itself in the background instead (see storage/writer.py).
    """
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.create_scalar_function("regexp", _regexp, 2, deterministic=True)
    if writer:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")
    else:
        conn.execute("PRAGMA query_only = ON")
