"""edge/ops/backup.py: a backup of a live site restores to the same site; it carries a
manifest of sizes and digests that a restore checks, and leaves out what must not leave
the box (the first staff password) or belongs to a running server."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from edge.app import open_site
from edge.kernel.errors import Conflict, ValidationError
from edge.kernel.listing import ListQuery
from edge.ops import backup, check
from storage import layout
from tests.conftest import make_config
from tests.edge.rooms import Room


def quiet(_: str) -> None:
    """An echo that prints nothing."""


async def test_a_backup_of_a_live_site_restores_to_the_same_site(
    room: Room, tmp_path: Path
) -> None:
    org_id = await room.org(alias="clinic")
    await room.add_user(org_id, username="nurse")
    data_dir = room.services.config.data_dir
    lines: list[str] = []
    made = backup.backup(data_dir, tmp_path / "copy", lines.append)  # the site stays open
    assert made.files >= 7 and made.bytes > 0 and any("100%" in line for line in lines)
    restored = backup.restore(tmp_path / "copy", tmp_path / "restored", force=False, echo=quiet)
    assert (restored.files, restored.bytes, restored.schema) == (
        made.files,
        made.bytes,
        made.schema,
    )
    again = open_site(make_config(tmp_path / "restored"))
    try:
        staff = Room(again).staff()
        assert again.services.orgs.resolve_client("clinic").id == org_id
        orgs = await again.services.orgs.list(staff, ListQuery())
        assert [o["id"] for o in orgs.rows] == [org_id]
    finally:
        again.services.db.close()


def test_the_manifest_names_every_file_with_its_size_and_digest(
    data_dir: Path, tmp_path: Path
) -> None:
    (data_dir / layout.INITIAL_ADMIN_FILE).write_text("the first staff password")
    stray = data_dir / layout.BLOBS_DIR / "ab" / "abstray"  # a blob the index does not name
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"left over")
    backup.backup(data_dir, tmp_path / "copy", quiet)
    manifest = json.loads((tmp_path / "copy" / backup.MANIFEST).read_text())
    assert manifest["format"] == backup.FORMAT
    names = set(manifest["files"])
    assert "edge.db" in names and any(n.startswith("keys/") for n in names)
    assert layout.INITIAL_ADMIN_FILE not in names
    assert not any(n.startswith(layout.BLOBS_DIR) for n in names)
    for name, entry in manifest["files"].items():
        assert (tmp_path / "copy" / name).stat().st_size == entry["size"]
        assert len(entry["sha256"]) == 64
    assert {p.name for p in (tmp_path / "copy").iterdir()} >= {"edge.db", backup.MANIFEST}
    assert not (tmp_path / "copy" / "edge.db-wal").exists()


def test_a_folder_without_a_site_is_not_backed_up(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValidationError):
        backup.backup(tmp_path / "empty", tmp_path / "copy", quiet)
    assert not (tmp_path / "copy").exists()


def test_restore_refuses_what_is_not_a_backup_of_this_format(
    data_dir: Path, tmp_path: Path
) -> None:
    (tmp_path / "nothing").mkdir()
    with pytest.raises(ValidationError, match="not an edge backup"):
        backup.restore(tmp_path / "nothing", tmp_path / "new", force=False, echo=quiet)
    backup.backup(data_dir, tmp_path / "copy", quiet)
    manifest_path = tmp_path / "copy" / backup.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**manifest, "format": backup.FORMAT + 1}))
    with pytest.raises(ValidationError, match="format"):
        backup.restore(tmp_path / "copy", tmp_path / "new", force=False, echo=quiet)
    manifest_path.write_text(json.dumps(manifest))
    (tmp_path / "copy" / "edge.db").unlink()
    with pytest.raises(ValidationError, match="edge.db is missing"):
        backup.restore(tmp_path / "copy", tmp_path / "new", force=False, echo=quiet)
    assert not (tmp_path / "new").exists()


def test_restore_into_an_empty_folder_needs_no_force(data_dir: Path, tmp_path: Path) -> None:
    backup.backup(data_dir, tmp_path / "copy", quiet)
    (tmp_path / "empty").mkdir()
    backup.restore(tmp_path / "copy", tmp_path / "empty", force=False, echo=quiet)
    assert layout.database_path(tmp_path / "empty").exists()
    with pytest.raises(Conflict):
        backup.backup(data_dir, tmp_path / "copy", quiet)  # the copy is not empty now


def test_backup_leaves_out_the_memory_reports(tmp_path: Path, data_dir: Path) -> None:
    reports = data_dir / layout.DIAGNOSTICS_DIR
    reports.mkdir()
    (reports / "memory-20261127T120000-1.txt").write_text("RSS 100.0 MiB\n")
    backup.backup(data_dir, tmp_path / "copy", echo=quiet)
    manifest = json.loads((tmp_path / "copy" / backup.MANIFEST).read_text())
    assert manifest["files"] and not any(n.startswith("diagnostics") for n in manifest["files"])
    assert not (tmp_path / "copy" / layout.DIAGNOSTICS_DIR).exists()


def test_restore_refuses_a_damaged_backup(tmp_path: Path, data_dir: Path) -> None:
    backup.backup(data_dir, tmp_path / "copy", echo=quiet)
    manifest = json.loads((tmp_path / "copy" / backup.MANIFEST).read_text())
    key = next(name for name in manifest["files"] if name.startswith("keys/"))
    (tmp_path / "copy" / key).write_bytes(b"tampered")
    with pytest.raises(ValidationError, match="damaged"):
        backup.restore(tmp_path / "copy", tmp_path / "new", force=False, echo=quiet)
    assert not (tmp_path / "new").exists()


def test_restore_keeps_the_replaced_site_aside(tmp_path: Path, data_dir: Path) -> None:
    backup.backup(data_dir, tmp_path / "copy", echo=quiet)
    target = tmp_path / "target"
    target.mkdir()
    (target / "old-file").write_text("keep me")
    with pytest.raises(Conflict, match="--force"):
        backup.restore(tmp_path / "copy", target, force=False, echo=quiet)
    backup.restore(tmp_path / "copy", target, force=True, echo=quiet)
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("target.replaced-")]
    assert len(aside) == 1 and (aside[0] / "old-file").read_text() == "keep me"
    assert layout.database_path(target).exists()


def test_restore_refuses_while_a_server_holds_the_folder(tmp_path: Path, data_dir: Path) -> None:
    backup.backup(data_dir, tmp_path / "copy", echo=quiet)
    held = tmp_path / "held"
    layout.prepare(held)
    layout.lock(held)
    with pytest.raises(Conflict, match="running"):
        backup.restore(tmp_path / "copy", held, force=True, echo=quiet)


def test_restore_sets_the_modes_a_first_start_makes(tmp_path: Path, data_dir: Path) -> None:
    """A backup copied around with `cp -r` or an archive loses its modes; the restored site
    is owner-only again (folder 0700, secrets 0600) whatever the umask, and check agrees."""
    backup.backup(data_dir, tmp_path / "copy", echo=quiet)
    for path in (tmp_path / "copy").rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    old_umask = os.umask(0o022)
    try:
        restored = tmp_path / "parent" / "restored"
        backup.restore(tmp_path / "copy", restored, force=False, echo=quiet)
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(restored.stat().st_mode) == 0o700
    for folder in layout.private_folders(restored):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    secrets = layout.secret_files(restored)
    assert layout.database_path(restored) in secrets and len(secrets) >= 7
    for path in secrets:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    lines: list[str] = []
    assert check.run(restored, echo=lines.append), lines


def test_backup_leaves_out_initial_admin_txt(data_dir: Path, tmp_path: Path) -> None:
    layout.write_secret(data_dir / layout.INITIAL_ADMIN_FILE, b"password: first-password\n")
    backup.backup(data_dir, tmp_path / "copy", echo=quiet)
    assert not (tmp_path / "copy" / layout.INITIAL_ADMIN_FILE).exists()
    copied = b"".join(p.read_bytes() for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert b"first-password" not in copied
