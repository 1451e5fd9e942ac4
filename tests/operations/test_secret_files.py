"""Every file that may hold a secret is owner-only whatever the umask (the outbox above
all: reset tokens, temporary passwords, sign-in codes). That `edge check` verifies it and a
backup leaves out initial-admin.txt: tests/edge/ops/test_check.py and test_backup.py."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from edge.delivery.mailer import FileMailer
from edge.delivery.sms import FileSms
from storage import layout


@pytest.fixture
def open_umask() -> Iterator[None]:
    """As under a manual start with umask 022 (or worse, 000)."""
    before = os.umask(0o000)
    yield
    os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


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
