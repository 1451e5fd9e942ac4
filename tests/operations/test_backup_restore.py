"""Backup while serving, restore elsewhere: the same accounts, passwords, refresh tokens,
and access tokens signed before the backup still verify."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from edge.app import create_app
from edge.kernel.errors import Conflict, ValidationError
from edge.ops import backup, check
from storage import layout
from tests.conftest import STAFF_PASSWORD, Api
from tests.factory import new_site
from tests.tenants import PASSWORD, new_tenant


async def test_restored_site_serves_the_same_accounts_and_tokens(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    first = new_site(tmp_path / "site")
    api = Api(await aiohttp_client(create_app(first)))
    tenant = await new_tenant(first, api)
    status, staff = await api.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "password", "username": "admin", "password": STAFF_PASSWORD},
    )
    assert status == 201
    status, user = await api.call(
        "POST",
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": tenant.admin_email,
            "password": PASSWORD,
            "client_id": tenant.alias,
        },
    )
    assert status == 201
    lines: list[str] = []
    summary = backup.backup(tmp_path / "site", tmp_path / "copy", echo=lines.append)  # live
    assert summary.files >= 3 and any("database: 100%" in line for line in lines)
    await api.client.close()

    restored = tmp_path / "restored"
    backup.restore(tmp_path / "copy", restored, force=False, echo=lines.append)
    second = new_site(restored)
    again = Api(await aiohttp_client(create_app(second)))
    status, body = await again.call("GET", f"/v2/orgs/{tenant.org_id}", staff["access_token"])
    assert status == 200 and body["org"]["alias"] == tenant.alias  # old access token verifies
    status, refreshed = await again.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "refresh_token", "refresh_token": user["refresh_token"]},
    )
    assert status == 201  # old refresh token works
    assert await again.token(tenant.admin_email, PASSWORD, client_id=tenant.alias)
    assert await again.token()  # the staff password too


def test_backup_refuses_a_non_empty_destination(tmp_path: Path, data_dir: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(Conflict):
        backup.backup(data_dir, tmp_path / "busy", echo=lambda _: None)


def test_backup_leaves_out_the_memory_reports(tmp_path: Path, data_dir: Path) -> None:
    reports = data_dir / layout.DIAGNOSTICS_DIR
    reports.mkdir()
    (reports / "memory-20261127T120000-1.txt").write_text("RSS 100.0 MiB\n")
    backup.backup(data_dir, tmp_path / "copy", echo=lambda _: None)
    manifest = json.loads((tmp_path / "copy" / backup.MANIFEST).read_text())
    assert manifest["files"] and not any(n.startswith("diagnostics") for n in manifest["files"])
    assert not (tmp_path / "copy" / layout.DIAGNOSTICS_DIR).exists()


def test_restore_refuses_a_damaged_backup(tmp_path: Path, data_dir: Path) -> None:
    backup.backup(data_dir, tmp_path / "copy", echo=lambda _: None)
    manifest = json.loads((tmp_path / "copy" / backup.MANIFEST).read_text())
    key = next(name for name in manifest["files"] if name.startswith("keys/"))
    (tmp_path / "copy" / key).write_bytes(b"tampered")
    with pytest.raises(ValidationError, match="damaged"):
        backup.restore(tmp_path / "copy", tmp_path / "new", force=False, echo=lambda _: None)
    assert not (tmp_path / "new").exists()


def test_restore_keeps_the_replaced_site_aside(tmp_path: Path, data_dir: Path) -> None:
    backup.backup(data_dir, tmp_path / "copy", echo=lambda _: None)
    target = tmp_path / "target"
    target.mkdir()
    (target / "old-file").write_text("keep me")
    with pytest.raises(Conflict, match="--force"):
        backup.restore(tmp_path / "copy", target, force=False, echo=lambda _: None)
    backup.restore(tmp_path / "copy", target, force=True, echo=lambda _: None)
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("target.replaced-")]
    assert len(aside) == 1 and (aside[0] / "old-file").read_text() == "keep me"
    assert layout.database_path(target).exists()


def test_restore_refuses_while_a_server_holds_the_folder(tmp_path: Path, data_dir: Path) -> None:
    backup.backup(data_dir, tmp_path / "copy", echo=lambda _: None)
    held = tmp_path / "held"
    layout.prepare(held)
    layout.lock(held)
    with pytest.raises(Conflict, match="running"):
        backup.restore(tmp_path / "copy", held, force=True, echo=lambda _: None)


def test_restore_sets_the_modes_a_first_start_makes(tmp_path: Path, data_dir: Path) -> None:
    """A backup copied around with `cp -r` or an archive loses its modes; the restored site
    is owner-only again (folder 0700, secrets 0600) whatever the umask, and check agrees."""
    backup.backup(data_dir, tmp_path / "copy", echo=lambda _: None)
    for path in (tmp_path / "copy").rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    old_umask = os.umask(0o022)
    try:
        restored = tmp_path / "parent" / "restored"
        backup.restore(tmp_path / "copy", restored, force=False, echo=lambda _: None)
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


def test_check_reports_a_data_folder_open_to_others(data_dir: Path) -> None:
    data_dir.chmod(0o755)
    lines: list[str] = []
    assert not check.run(data_dir, echo=lines.append)
    assert any(
        line.startswith("FAIL  permissions") and f"{data_dir} is open" in line for line in lines
    )
