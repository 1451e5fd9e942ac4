"""edge/ops/check.py (`edge check`): one line per finding and a summary; only a FAIL fails
the run, a warning does not."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from edge.certificates import ca
from edge.kernel import clock
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
        "certificates",
        "site-ca",
        "server",
    ]
    assert all(line.startswith("ok") for line in lines[:-1])
    assert lines[-1] == "9 ok, 0 warnings, 0 failed"


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


def test_check_reports_a_data_folder_open_to_others(data_dir: Path) -> None:
    data_dir.chmod(0o755)
    lines: list[str] = []
    assert not check.run(data_dir, echo=lines.append)
    assert any(
        line.startswith("FAIL  permissions") and f"{data_dir} is open" in line for line in lines
    )


@pytest.mark.parametrize("where", ["outbox/mail/old.eml", "outbox/sms/old.txt", "backups/x.db"])
def test_check_finds_readable_secrets_in_the_outbox_and_backups(data_dir: Path, where: str) -> None:
    path = data_dir / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("Your reset token: secret-token")
    path.chmod(0o644)
    ok, lines = run(data_dir)
    assert not ok
    assert any(f"chmod 600 {path}" in line for line in lines), lines


def test_check_finds_an_open_outbox_folder(data_dir: Path) -> None:
    outbox = data_dir / layout.OUTBOX_DIR
    outbox.chmod(0o755)
    ok, lines = run(data_dir)
    assert not ok and any(f"chmod 700 {outbox}" in line for line in lines), lines


def test_check_reports_readable_secrets(data_dir: Path) -> None:
    key = next((data_dir / "keys").glob("signing-*.pem"))
    key.chmod(0o644)
    ok, lines = run(data_dir)
    assert not ok
    assert any(line.startswith("FAIL  permissions") and str(key) in line for line in lines)


def test_check_reports_a_readable_ca_key_but_not_the_public_certificate(data_dir: Path) -> None:
    assert (data_dir / "ca" / "ca.pem").stat().st_mode & 0o044  # public, as served
    assert run(data_dir)[0]
    key = data_dir / "ca" / "ca.key"
    key.chmod(0o644)
    ok, lines = run(data_dir)
    assert not ok
    assert any(line.startswith("FAIL  permissions") and str(key) in line for line in lines)


def test_check_reports_a_schema_from_a_newer_edge(data_dir: Path) -> None:
    conn = apsw.Connection(str(layout.database_path(data_dir)))
    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (999, '0999_future.sql')")
    conn.close()
    ok, lines = run(data_dir)
    assert not ok and any("newer edge" in line for line in lines)


def test_check_reports_missing_keys_and_database(tmp_path: Path, data_dir: Path) -> None:
    for key in (data_dir / "keys").iterdir():
        key.unlink()
    ok, lines = run(data_dir)
    assert not ok and any(line.startswith("FAIL  keys") for line in lines)
    ok, lines = run(tmp_path / "nowhere")
    assert not ok and any("not an edge data folder" in line for line in lines)


def test_check_reports_a_damaged_database(data_dir: Path) -> None:
    db = layout.database_path(data_dir)
    with open(db, "r+b") as handle:  # overwrite a page in the middle with garbage
        handle.seek(os.path.getsize(db) // 2)
        handle.write(b"\xff" * 4096)
    ok, lines = run(data_dir)
    assert not ok and any(line.startswith("FAIL  database") for line in lines)


def test_check_reports_account_wide_sign_in_lockouts(data_dir: Path) -> None:
    conn = apsw.Connection(str(layout.database_path(data_dir)))
    conn.execute(
        "INSERT INTO sign_in_lockouts (account, failures, addresses, blocked_until,"
        " created_date) VALUES ('user:abc', 100, 37, ?, ?)",
        (clock.now_iso(), clock.now_iso()),
    )
    conn.close()
    ok, lines = run(data_dir)
    assert ok  # a warning, not a fault
    assert any(
        line.startswith("warn  sign-in") and "user:abc" in line and "37 addresses" in line
        for line in lines
    )


@pytest.mark.parametrize(
    ("days", "level", "said"),
    [
        (3650 - 400, "ok", "valid until"),
        (3650 - 300, "warn", "days); roll it as docs/provisioning.md says"),
        (3650 + 1, "FAIL", "ended on"),
    ],
)
def test_the_site_ca_is_warned_about_a_year_before_it_ends(
    data_dir: Path, days: int, level: str, said: str
) -> None:
    """The CA lasts 10 years: a year ahead `edge check` says how to roll it; once ended, a
    FAIL (no device certificate it signed is good)."""
    clock.advance(timedelta(days=days))
    passed, lines = run(data_dir)
    (found,) = [line for line in lines if line.split()[1] == "site-ca"]
    assert found.startswith(level) and said in found, found
    assert passed == (level != "FAIL")
    if level != "ok":
        assert "every device gets new credentials" in found
