"""`edge backup --into FOLDER`: a backup named by its UTC time, the oldest removed past
backup_keep, nothing else in FOLDER touched, an interrupted run's leftovers cleared, and
two runs kept apart. What the Debian package's nightly timer runs."""

from __future__ import annotations

import fcntl
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest

from edge import cli
from edge.kernel import clock
from edge.kernel.errors import Conflict
from edge.ops import backup, backup_rotation
from tests.factory import new_site

NAME = re.compile(r"^edge-\d{4}-\d{2}-\d{2}T\d{6}Z$")


def nightly(data_dir: Path, folder: Path, keep: int, nights: int) -> list[Path]:
    """`nights` backups a day apart (the clock moved, not waited for)."""
    made = []
    for _ in range(nights):
        made.append(backup_rotation.into(data_dir, folder, keep, echo=lambda _: None).path)
        clock.advance(timedelta(days=1))
    return made


def test_the_newest_backups_stay_and_the_oldest_go(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    made = nightly(data_dir, folder, keep=3, nights=5)
    assert all(NAME.match(p.name) for p in made) and len(set(made)) == 5
    assert backup_rotation.backups(folder) == made[-3:]
    assert sorted(p.name for p in folder.iterdir()) == [".edge-backup.lock"] + [
        p.name for p in made[-3:]
    ]
    restored = tmp_path / "restored"
    backup.restore(made[-1], restored, force=False, echo=lambda _: None)  # each one whole
    new_site(restored).services.db.close()


def test_the_name_is_the_utc_time_and_the_folder_owner_only(data_dir: Path, tmp_path: Path) -> None:
    clock.freeze()
    expected = clock.now().strftime("edge-%Y-%m-%dT%H%M%SZ")
    (made,) = nightly(data_dir, tmp_path / "backups", keep=1, nights=1)
    assert made.name == expected
    assert (tmp_path / "backups").stat().st_mode & 0o777 == 0o700
    assert made.stat().st_mode & 0o777 == 0o700


def test_a_folder_that_exists_keeps_its_mode(data_dir: Path, tmp_path: Path) -> None:
    """A shared backup folder (read by a sync tool's group) is not made owner-only: each
    backup in it is."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o750)
    (made,) = nightly(data_dir, folder, keep=1, nights=1)
    assert folder.stat().st_mode & 0o777 == 0o750
    assert made.stat().st_mode & 0o777 == 0o700


def test_nothing_else_in_the_folder_is_touched(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (folder / "edge-2000-01-01T000000Z").symlink_to(outside)  # named like one, but a link
    (folder / "edge-by-hand").mkdir()
    (folder / "notes.txt").write_text("notes")
    (folder / "edge-2000-01-02T000000Z.partial").write_text("a file, not a folder")
    nightly(data_dir, folder, keep=1, nights=3)
    assert (outside / "keep.txt").read_text() == "mine"
    left = {p.name for p in folder.iterdir()}
    assert {"edge-2000-01-01T000000Z", "edge-by-hand", "notes.txt"} <= left
    assert "edge-2000-01-02T000000Z.partial" in left


def test_an_interrupted_backup_is_cleared_and_never_counted(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    (old,) = nightly(data_dir, folder, keep=1, nights=1)
    partial = folder / "edge-2999-01-01T000000Z.partial"  # sorts after every real name
    partial.mkdir()
    (partial / "edge.db").write_bytes(b"half")
    (new,) = nightly(data_dir, folder, keep=1, nights=1)
    assert not partial.exists()
    assert backup_rotation.backups(folder) == [new] and not old.exists()


def test_a_second_run_while_one_runs_is_refused(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    fd = os.open(folder / backup_rotation.LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(Conflict, match="another backup into"):
            backup_rotation.into(data_dir, folder, 2, echo=lambda _: None)
    finally:
        os.close(fd)
    assert backup_rotation.backups(folder) == []


def test_the_command_reads_backup_keep_from_the_config_file(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "backups"
    config = tmp_path / "edge.toml"
    config.write_text(f'data_dir = "{data_dir}"\nbackup_keep = 2\n')
    for _ in range(3):
        assert cli.main(["backup", "--config", str(config), "--into", str(folder)]) == 0
        clock.advance(timedelta(hours=1))
    out = capsys.readouterr().out
    assert len(backup_rotation.backups(folder)) == 2
    assert out.count("removed edge-") == 1 and "keeping the newest 2" in out


def test_a_folder_and_into_together_are_a_usage_error(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        cli.main(["backup", str(tmp_path / "a"), "--into", str(tmp_path / "b")])
    assert exit.value.code == 2 and "not allowed with" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit:
        cli.main(["backup", "--data-dir", str(data_dir)])
    assert exit.value.code == 2
