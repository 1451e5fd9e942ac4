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
# The keys, in keys/ and ca/ (edge/ops/site_keys.py checks each before a site opens).
SIGNING_KEY_PREFIX = "signing-"  # keys/signing-NNNN-<kid>.pem: token signing keys (EC P-256)
HMAC_KEY_FILE = "hmac.key"  # signs continuation keys of lists
MFA_KEY_FILE = "mfa.fernet.key"  # encrypts TOTP secrets at rest (they cannot be hashed)
FILES_URL_KEY_FILE = "files-url.key"  # signs presigned file URLs
DATA_SIGNING_KEY_FILE = "data-signing.key"  # signs data entries
CA_KEY_FILE, CA_CERT_FILE = "ca.key", "ca.pem"  # the site CA (device and server certificates)
SERVER_KEY_FILE, SERVER_CERT_FILE = "server.key", "server.pem"  # issued by the site CA
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


def private_folders(data_dir: Path) -> list[Path]:
    """The folders that must be owner-only (0700): the data folder itself, the secret
    folders and the copies made before upgrades, with every folder inside them."""
    tops = [data_dir / name for name in (*SECRET_DIRS, BACKUPS_DIR)]
    inner = [p for top in tops if top.is_dir() for p in top.rglob("*") if p.is_dir()]
    return [data_dir, *(top for top in tops if top.is_dir()), *inner]


def secret_files(data_dir: Path) -> list[Path]:
    """The files that must be owner-only (0600): the database and every file in a secret
    folder or a copy, except the CA's certificates, which are public (the CA certificate
    is served at /v2/devices/root-ca.pem)."""
    tops = [data_dir / name for name in (*SECRET_DIRS, BACKUPS_DIR)]
    inside = [p for top in tops if top.is_dir() for p in top.rglob("*") if p.is_file()]
    public = [p for p in inside if p.parent.name == CA_DIR and p.suffix != ".key"]
    database = database_path(data_dir)
    return [*([database] if database.is_file() else []), *(p for p in inside if p not in public)]


def protect(data_dir: Path) -> None:
    """Put the modes right, as a first start makes them (after a restore, whose copies
    keep whatever modes the backup's files had on the way)."""
    for folder in private_folders(data_dir):
        folder.chmod(SECRET_DIR_MODE)
    for path in secret_files(data_dir):
        path.chmod(SECRET_FILE_MODE)


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
