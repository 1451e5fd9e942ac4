"""`edge backup --into FOLDER`: a new backup in FOLDER named by its time, then the oldest
removed so that `backup_keep` remain. The Debian package's nightly timer runs it; it works
the same from cron or by hand.

Names are `edge-YYYY-MM-DDTHHMMSSZ` (UTC), so sorting by name sorts by age. A backup is
written as `<name>.partial` and renamed once complete: a folder with a final name is always
whole, and only such folders are counted and removed; nothing else in FOLDER is touched. A
lock file in FOLDER keeps two runs apart, so the run holding it knows that any `.partial`
folder is left from an interrupted run, and removes it.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from edge.kernel import clock
from edge.kernel.errors import Conflict
from edge.ops import backup
from storage import layout
from storage.blobs import fsync_dir

NAME = re.compile(r"^edge-\d{4}-\d{2}-\d{2}T\d{6}Z$")
PARTIAL = ".partial"
LOCK_FILE = ".edge-backup.lock"


@dataclass(frozen=True)
class Rotation:
    summary: backup.Summary
    path: Path
    removed: list[Path]


def into(data_dir: Path, folder: Path, keep: int, echo: backup.Echo = print) -> Rotation:
    """Back up `data_dir` into a new folder of `folder`, then keep the newest `keep`."""
    folder.mkdir(mode=layout.SECRET_DIR_MODE, parents=True, exist_ok=True)  # others: kept
    with _locked(folder):
        _remove_partials(folder, echo)
        final = folder / clock.now().strftime("edge-%Y-%m-%dT%H%M%SZ")
        if final.exists():
            raise Conflict(f"{final} already exists; try again in a second")
        partial = final.with_name(final.name + PARTIAL)
        summary = backup.backup(data_dir, partial, echo)
        partial.rename(final)
        fsync_dir(folder)  # the rename is durable before older backups are removed
        removed = _prune(folder, keep)
    return Rotation(summary, final, removed)


def backups(folder: Path) -> list[Path]:
    """The complete backups in `folder`, oldest first."""
    found = [p for p in folder.iterdir() if NAME.match(p.name) and _is_real_dir(p)]
    return sorted(found, key=lambda p: p.name)


def _prune(folder: Path, keep: int) -> list[Path]:
    old = backups(folder)[:-keep]
    for path in old:
        shutil.rmtree(path)
    return old


def _remove_partials(folder: Path, echo: backup.Echo) -> None:
    for path in folder.iterdir():
        if path.name.endswith(PARTIAL) and NAME.match(path.name[: -len(PARTIAL)]):
            if _is_real_dir(path):
                echo(f"  removing {path.name}, left by an interrupted backup")
                shutil.rmtree(path)


def _is_real_dir(path: Path) -> bool:
    """A folder, not a link to one: removing follows no link out of FOLDER."""
    return path.is_dir() and not path.is_symlink()


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, layout.SECRET_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise Conflict(f"another backup into {folder} is running") from None
    try:
        yield
    finally:
        os.close(fd)
