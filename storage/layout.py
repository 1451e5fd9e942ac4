"""Names inside the data folder, in one place so backup, restore and check agree on them."""

import fcntl
import os
from pathlib import Path

DATABASE_FILE = "edge.db"
KEYS_DIR = "keys"
BLOBS_DIR = "blobs"
CA_DIR = "ca"
OUTBOX_DIR = "outbox"
TMP_DIR = "tmp"
UPLOADS_DIR = "uploads"  # parts of multipart uploads in progress (not backed up)
BLOBS_LOCK_FILE = "blobs.lock"  # held shared by a backup while it copies blobs
BACKUPS_DIR = "backups"
DIAGNOSTICS_DIR = "diagnostics"  # memory reports asked for with SIGUSR2 (not backed up)
INITIAL_ADMIN_FILE = "initial-admin.txt"
LOCK_FILE = "edge.lock"
SECRET_FILE_MODE = 0o600
SECRET_DIR_MODE = 0o700


def database_path(data_dir: Path) -> Path:
    return data_dir / DATABASE_FILE


def keys_dir(data_dir: Path) -> Path:
    return data_dir / KEYS_DIR


# Folders that hold secrets: keys, the CA, and the outbox (mail and SMS in file mode carry
# reset tokens, temporary passwords and sign-in codes).
SECRET_DIRS = (KEYS_DIR, CA_DIR, OUTBOX_DIR)


def prepare(data_dir: Path) -> None:
    """Create the data folder and its sub-folders; secrets live in owner-only folders
    (made so, or put right, on every start, whatever the process umask)."""
    if not data_dir.exists():
        data_dir.mkdir(mode=SECRET_DIR_MODE, parents=True)
    _create_private(database_path(data_dir))
    for name in (BLOBS_DIR, TMP_DIR, UPLOADS_DIR):
        (data_dir / name).mkdir(exist_ok=True)
    for name in SECRET_DIRS:
        private_dir(data_dir / name)


def private_dir(path: Path) -> None:
    """An owner-only folder (0700), made with its parents if missing."""
    path.mkdir(mode=SECRET_DIR_MODE, parents=True, exist_ok=True)
    path.chmod(SECRET_DIR_MODE)


def write_secret(path: Path, content: bytes) -> None:
    """Write a secret file with owner-only permissions from the first byte, whatever the
    umask (temp then rename, so a reader never sees half of it)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = _open_private(tmp)
    os.fchmod(fd, SECRET_FILE_MODE)  # a stale temp file keeps its old mode otherwise
    with open(fd, "wb") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


def _create_private(path: Path) -> None:
    """The database holds password and session hashes: owner-only, like its WAL files."""
    if not path.exists():
        os.close(_open_private(path, truncate=False))
    path.chmod(SECRET_FILE_MODE)


def _open_private(path: Path, truncate: bool = True) -> int:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if truncate else 0)
    return os.open(path, flags, SECRET_FILE_MODE)


def lock(data_dir: Path) -> int:
    """Hold the data folder for one server: returns the lock's file descriptor.

    Raises BlockingIOError when another process holds it. The lock ends with the process.
    """
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, SECRET_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def is_locked(data_dir: Path) -> bool:
    path = data_dir / LOCK_FILE
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
