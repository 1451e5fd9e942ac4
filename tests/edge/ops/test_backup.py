"""edge/ops/backup.py: a backup of a live site restores to the same site; it carries a
manifest of sizes and digests that a restore checks, and leaves out what must not leave
the box (the first staff password) or belongs to a running server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edge.app import open_site
from edge.kernel.errors import Conflict, ValidationError
from edge.kernel.listing import ListQuery
from edge.ops import backup
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
