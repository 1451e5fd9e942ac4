"""edge/ops/check.py (`edge check`): one line per finding and a summary; only a FAIL fails
the run, a warning does not."""

from __future__ import annotations

import os
from pathlib import Path

from edge.certificates import ca
from edge.ops import check
from storage import layout


def run(data_dir: Path, tls: tuple[Path, Path] | None = None) -> tuple[bool, list[str]]:
    lines: list[str] = []
    return check.run(data_dir, lines.append, tls), lines


def test_a_sound_site_passes_every_check(data_dir: Path) -> None:
    passed, lines = run(data_dir)
    assert passed, lines
    checks = [line.split()[1] for line in lines[:-1]]
    assert checks == [
        "database",
        "migrations",
        "keys",
        "permissions",
        "sign-in",
        "logins",
        "server",
    ]
    assert all(line.startswith("ok") for line in lines[:-1])
    assert lines[-1] == "7 ok, 0 warnings, 0 failed"


def test_a_warning_is_reported_but_does_not_fail(data_dir: Path) -> None:
    (data_dir / layout.INITIAL_ADMIN_FILE).write_text("first password")
    (data_dir / layout.INITIAL_ADMIN_FILE).chmod(0o600)
    passed, lines = run(data_dir)
    assert passed
    assert any(line.startswith("warn") and "initial-admin.txt" in line for line in lines)
    assert lines[-1].endswith("1 warnings, 0 failed")


def test_a_folder_without_a_site_fails_once_and_skips_what_needs_one(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir(mode=0o700)
    passed, lines = run(tmp_path / "empty")
    assert not passed
    failed = [line for line in lines if line.startswith("FAIL")]
    assert len(failed) == 1 and "not an edge data folder" in failed[0]


def test_a_server_holding_the_folder_is_reported(data_dir: Path) -> None:
    fd = layout.lock(data_dir)
    try:
        _, lines = run(data_dir)
    finally:
        os.close(fd)
    assert any("a server is running on this folder" in line for line in lines)


def test_the_operators_certificate_must_match_its_key(data_dir: Path, tmp_path: Path) -> None:
    first = ca.server_certificate(tmp_path / "one", ["localhost"])
    second = ca.server_certificate(tmp_path / "two", ["localhost"])
    passed, lines = run(data_dir, (first.cert, first.key))
    assert passed and any(line.split()[:2] == ["ok", "tls"] for line in lines)
    passed, lines = run(data_dir, (first.cert, second.key))
    assert not passed and any(line.split()[:2] == ["FAIL", "tls"] for line in lines)
