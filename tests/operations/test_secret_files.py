"""Every file that may hold a secret is owner-only whatever the umask (the outbox above
all: reset tokens, temporary passwords, sign-in codes), `edge check` verifies it, and a
backup leaves out initial-admin.txt (the first staff password in plain text)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from edge.delivery.mailer import FileMailer
from edge.delivery.sms import FileSms
from edge.ops import backup, check
from storage import layout


@pytest.fixture
def open_umask() -> Iterator[None]:
    """As under a manual start with umask 022 (or worse, 000)."""
    before = os.umask(0o000)
    yield
    os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def findings(folder: Path) -> tuple[bool, list[str]]:
    lines: list[str] = []
    return check.run(folder, echo=lines.append), lines


async def test_outbox_files_are_owner_only_whatever_the_umask(
    tmp_path: Path, open_umask: None
) -> None:
    data_dir = tmp_path / "data"
    layout.prepare(data_dir)
    outbox = data_dir / layout.OUTBOX_DIR
    message = EmailMessage()
    message["Message-ID"] = "<reset-1@edge.local>"
    message.set_content("Your reset token: secret-token")
    await FileMailer(outbox / "mail").send(message)
    await FileSms(outbox / "sms").send("sms-1", "+15550100000", "Your code: 123456")
    files = [*outbox.rglob("*.eml"), *outbox.rglob("*.txt")]
    assert len(files) == 2
    assert all(mode(f) == 0o600 for f in files), [oct(mode(f)) for f in files]
    assert all(mode(d) == 0o700 for d in (outbox, outbox / "mail", outbox / "sms"))
    assert all(mode(f) == 0o600 for f in (data_dir / "edge.db",))


def test_prepare_puts_an_old_outbox_right(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    layout.prepare(data_dir)
    (data_dir / layout.OUTBOX_DIR).chmod(0o755)
    layout.prepare(data_dir)
    assert mode(data_dir / layout.OUTBOX_DIR) == 0o700


@pytest.mark.parametrize("where", ["outbox/mail/old.eml", "outbox/sms/old.txt", "backups/x.db"])
def test_check_finds_readable_secrets_in_the_outbox_and_backups(data_dir: Path, where: str) -> None:
    path = data_dir / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("Your reset token: secret-token")
    path.chmod(0o644)
    ok, lines = findings(data_dir)
    assert not ok
    assert any(f"chmod 600 {path}" in line for line in lines), lines


def test_check_finds_an_open_outbox_folder(data_dir: Path) -> None:
    outbox = data_dir / layout.OUTBOX_DIR
    outbox.chmod(0o755)
    ok, lines = findings(data_dir)
    assert not ok and any(f"chmod 700 {outbox}" in line for line in lines), lines


def test_check_warns_while_initial_admin_txt_is_there(data_dir: Path) -> None:
    layout.write_secret(data_dir / layout.INITIAL_ADMIN_FILE, b"password: x\n")
    ok, lines = findings(data_dir)
    assert ok and any("initial-admin.txt still holds" in line for line in lines)


def test_backup_leaves_out_initial_admin_txt(data_dir: Path, tmp_path: Path) -> None:
    layout.write_secret(data_dir / layout.INITIAL_ADMIN_FILE, b"password: first-password\n")
    backup.backup(data_dir, tmp_path / "copy", echo=lambda _: None)
    assert not (tmp_path / "copy" / layout.INITIAL_ADMIN_FILE).exists()
    copied = b"".join(p.read_bytes() for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert b"first-password" not in copied
