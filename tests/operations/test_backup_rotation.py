"""`edge backup --into FOLDER`, what the Debian package's nightly timer runs: `backup_keep`
read from the config file, and its usage errors. The rotation's rules (names, modes,
what is kept, removed and left alone): tests/edge/ops/test_backup_rotation.py."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from edge import cli
from edge.kernel import clock
from edge.ops import backup_rotation


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
