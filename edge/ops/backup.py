"""`edge backup` and `edge restore`: a consistent copy of a site, and a site made from one.

A backup is a folder: `edge.db` (an online snapshot, safe while the server runs), the blobs
that snapshot names, every other file of the data folder (keys, CA, outbox), and
`backup.json`, which lists each file with its size and SHA-256 so a restore can refuse a
damaged copy.

Blobs and index agree because the backup holds the blobs (storage/blobs.py `hold`) from
before the snapshot until the last blob is copied: the server may add blobs meanwhile but
unlinks none, so every blob the snapshot names is still there to copy. Blobs added after
the snapshot, and parts of uploads in progress, are left out.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge import BUILD_VERSION
from edge.kernel import clock
from edge.kernel.errors import Conflict, ValidationError
from storage import blobs, layout, snapshot
from storage import files as file_index

MANIFEST = "backup.json"
FORMAT = 1
# initial-admin.txt holds the first staff password in plain text: it never leaves the box.
SKIPPED = {
    "edge.db",
    "edge.db-wal",
    "edge.db-shm",
    layout.LOCK_FILE,
    layout.BLOBS_LOCK_FILE,
    layout.INITIAL_ADMIN_FILE,
}
SKIPPED_DIRS = {
    layout.TMP_DIR,
    layout.BACKUPS_DIR,
    layout.BLOBS_DIR,
    layout.UPLOADS_DIR,
    layout.DIAGNOSTICS_DIR,
}
Echo = Callable[[str], None]


@dataclass(frozen=True)
class Summary:
    files: int
    bytes: int
    schema: int
    seconds: float


def backup(data_dir: Path, dest: Path, echo: Echo = print) -> Summary:
    began = time.monotonic()
    if not layout.database_path(data_dir).exists():
        raise ValidationError("data_dir", f"{data_dir} holds no edge site")
    if dest.exists() and any(dest.iterdir()):
        raise Conflict(f"{dest} is not empty; choose a new folder for the backup")
    dest.mkdir(mode=layout.SECRET_DIR_MODE, parents=True, exist_ok=True)
    with blobs.hold(data_dir):
        snapshot.copy_database(layout.database_path(data_dir), dest / "edge.db", _pages(echo))
        (dest / "edge.db").chmod(layout.SECRET_FILE_MODE)
        files = [*_site_files(data_dir), *_blob_files(data_dir, dest / "edge.db")]
        for number, relative in enumerate(files, 1):
            _copy(data_dir / relative, dest / relative)
            _files_progress(echo, number, len(files))
    manifest = _manifest(dest, ["edge.db", *files])
    layout.write_secret(dest / MANIFEST, json.dumps(manifest, indent=2).encode())
    total = sum(int(entry["size"]) for entry in manifest["files"].values())
    return Summary(len(files) + 1, total, int(manifest["schema_version"]), time.monotonic() - began)


def restore(source: Path, data_dir: Path, *, force: bool, echo: Echo = print) -> Summary:
    began = time.monotonic()
    manifest = _verified_manifest(source, echo)
    if layout.is_locked(data_dir):
        raise Conflict(f"a server is running on {data_dir}; stop it before restoring")
    if data_dir.exists() and any(data_dir.iterdir()):
        if not force:
            raise Conflict(
                f"{data_dir} is not empty; pass --force to replace it (it is kept aside)"
            )
        aside = data_dir.with_name(f"{data_dir.name}.replaced-{int(time.time())}")
        data_dir.rename(aside)
        echo(f"  the previous site was moved to {aside}")
    names = sorted(manifest["files"])
    layout.private_dir(data_dir)  # owner-only before the first secret lands in it
    for number, relative in enumerate(names, 1):
        _copy(source / relative, data_dir / relative)
        _files_progress(echo, number, len(names))
    layout.prepare(data_dir)
    layout.protect(data_dir)  # the copies keep the modes the backup's files had
    problems = snapshot.integrity_problems(layout.database_path(data_dir))
    if problems:
        raise ValidationError(None, f"the restored database is damaged: {problems[0]}")
    total = sum(int(entry["size"]) for entry in manifest["files"].values())
    return Summary(len(names), total, int(manifest["schema_version"]), time.monotonic() - began)


def _site_files(data_dir: Path) -> Iterator[str]:
    for path in sorted(data_dir.rglob("*")):
        relative = path.relative_to(data_dir)
        if (
            path.is_file()
            and relative.parts[0] not in SKIPPED_DIRS
            and str(relative) not in SKIPPED
        ):
            yield str(relative)


def _blob_files(data_dir: Path, database: Path) -> list[str]:
    store = blobs.BlobStore(data_dir)
    names = file_index.blobs_in_snapshot(database)
    return [str(store.path_of(name).relative_to(data_dir)) for name in names]


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(mode=layout.SECRET_DIR_MODE, parents=True, exist_ok=True)
    shutil.copy2(source, target)


def _manifest(dest: Path, names: list[str]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "edge_version": BUILD_VERSION,
        "schema_version": snapshot.schema_version(dest / "edge.db"),
        "created": clock.now_iso(),
        "files": {
            name: {"size": (dest / name).stat().st_size, "sha256": _digest(dest / name)}
            for name in names
        },
    }


def _verified_manifest(source: Path, echo: Echo) -> dict[str, Any]:
    try:
        manifest = json.loads((source / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        raise ValidationError(
            None, f"{source} is not an edge backup (no readable {MANIFEST})"
        ) from None
    if manifest.get("format") != FORMAT:
        raise ValidationError(
            None,
            f"{source} has backup format {manifest.get('format')}, this edge reads format {FORMAT}",
        )
    echo(f"  verifying {len(manifest['files'])} files")
    for name, entry in manifest["files"].items():
        path = source / name
        if not path.is_file() or _digest(path) != entry["sha256"]:
            raise ValidationError(None, f"the backup is damaged: {name} is missing or changed")
    return dict(manifest)


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _pages(echo: Echo) -> snapshot.Progress:
    def report(done: int, total: int) -> None:
        if done == total or done % (snapshot.PAGES_PER_STEP * 16) == 0:
            echo(f"  database: {done * 100 // max(total, 1)}% ({done}/{total} pages)")

    return report


def _files_progress(echo: Echo, number: int, total: int, step: int = 200) -> None:
    if number == total or number % step == 0:
        echo(f"  files: {number}/{total}")
