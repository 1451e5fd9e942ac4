"""The agent's files: owner-only (0600, in a 0700 state folder), written to a temporary
file beside the target and renamed over it, so a power cut leaves the old file or the new
one, never half of one; and the refusal of a secret other users of the device can read.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any


class UnsafeFile(Exception):
    """A secret file that others may read or write, or that cannot be read."""


def state_folder(path: Path) -> Path:
    """The state folder, made owner-only when missing (an existing one keeps its mode,
    narrowed to the owner)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, stat.S_IMODE(path.stat().st_mode) & 0o700)
    return path


def write_json(path: Path, value: Any) -> None:
    write_bytes(path, json.dumps(value, indent=2, sort_keys=True).encode() + b"\n")


def write_bytes(path: Path, data: bytes) -> None:
    """`data` as the whole of `path`, mode 0600, atomically and durably."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            os.fchmod(out.fileno(), 0o600)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def replace(source: Path, target: Path) -> None:
    """`source` renamed over `target`, durably: the rename survives a power cut."""
    os.replace(source, target)
    _sync_folder(target.parent)


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`; None when it is missing, not JSON or not an object."""
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def read_secret(path: Path) -> str:
    """A secret (an API key) from a file only its owner may read, as ssh insists for keys."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        text = path.read_text("utf-8").strip()
    except OSError as failed:
        raise UnsafeFile(f"{path}: {failed.strerror or failed}") from None
    if mode & 0o077:
        raise UnsafeFile(f"{path}: others may read it (mode {mode:04o}); chmod 600 it")
    if not text:
        raise UnsafeFile(f"{path}: empty")
    return text


def _sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
