"""The epochs the in-process caches watch (the verified tokens and API keys, the callers'
permissions, what is kept about users), read together.

Each is a one-row table that triggers bump (migrations 0006, 0007 and 0018). An
authenticated request looks at two or three of them before it may act: one statement that
reads them all, kept for the rest of the event loop's snapshot (`Database.read_memo` under
KEY), costs what one of them did, where each was a statement of its own (a trip into
SQLite and a hand-over of the GIL, which the writer's thread may take meanwhile).
"""

from __future__ import annotations

from typing import NamedTuple

from storage.rows import Tx

KEY = "epochs"  # the memo of the loop's snapshot they are kept under

_ALL = (
    "SELECT (SELECT value FROM auth_epoch WHERE id = 1),"
    " (SELECT value FROM access_epoch WHERE id = 1),"
    " (SELECT value FROM users_epoch WHERE id = 1)"
)


class Epochs(NamedTuple):
    auth: int  # sessions ended, users suspended or given a new password
    access: int  # any permission answer may have changed
    users: int  # a user row, a picture or a session changed


def read(conn: Tx) -> Epochs:
    row = conn.execute(_ALL).fetchone()  # one row, whatever the tables hold
    assert row is not None
    auth, access, users = row
    return Epochs(int(auth or 0), int(access or 0), int(users or 0))
