"""Root may not run a command on a data folder that belongs to another user.

The service runs as its own user (`edge`). Whatever root makes in that user's data folder
(`blobs.lock` taken by a backup, the database's `-wal` and `-shm`, a key written at start,
a restored site) would belong to root, owner-only, and the service could not open it. Handing
such files back with chown afterwards would have root act by name inside a folder that
another user can change (a link planted there turns the chown against any file), and would
miss the files the command left to others (SQLite's). So root is refused, with the command
that works, as PostgreSQL's tools do: run it as the folder's owner (`sudo -u edge ...`).

A folder that does not exist yet, or that belongs to root, is root's to use.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path


def refusal(data_dir: Path, command: str) -> str | None:
    """The one line that refuses root on another user's data folder, else None."""
    if os.geteuid() != 0:
        return None
    try:
        owner = data_dir.stat().st_uid
    except OSError:  # missing or unusable: the command itself says what is wrong
        return None
    if owner == 0:
        return None
    name = _user_name(owner)
    return (
        f"{data_dir} belongs to user {name}, and files root made there would lock that user"
        f" out: run the command as {name} (sudo -u {_sudo_user(owner, name)} edge {command} ...)"
    )


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _sudo_user(uid: int, name: str) -> str:
    """sudo's spelling of the user: its name, or `#UID` when it has none."""
    return f"'#{uid}'" if name == str(uid) else name
