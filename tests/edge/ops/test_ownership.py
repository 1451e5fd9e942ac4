"""edge/ops/ownership.py: root is refused on a data folder another user owns, with the
command that works; its own folder, or one not made yet, is root's to use; the service
itself opens the folder the refusal protects."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from edge.ops import ownership
from storage import staff
from tests.factory import new_site

# Giving a folder away (chown) needs root, as the rule itself is about root.
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the refusal is for root only")
NO_NAME = 54321  # a user ID with no name on this machine


def test_anyone_but_root_may_run_on_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # this process as another user
    os.chown(tmp_path, NO_NAME, -1)
    assert ownership.refusal(tmp_path, "backup") is None


def test_root_may_use_its_own_folder_or_one_not_made_yet(tmp_path: Path) -> None:
    os.chown(tmp_path, 0, -1)
    assert ownership.refusal(tmp_path, "backup") is None
    assert ownership.refusal(tmp_path / "missing", "restore") is None


def test_root_on_another_users_folder_is_told_how_to_run_it(tmp_path: Path) -> None:
    os.chown(tmp_path, NO_NAME, -1)
    refused = ownership.refusal(tmp_path, "check")
    assert refused is not None
    assert f"belongs to user {NO_NAME}" in refused
    assert f"sudo -u '#{NO_NAME}' edge check" in refused


OWNER = pwd.getpwnam("nobody")


def give_away(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, OWNER.pw_uid, OWNER.pw_gid)


def test_the_service_can_use_what_the_refusal_protects(data_dir: Path) -> None:
    """The guard is on the command line, not in the site: the service opens its folder."""
    give_away(data_dir)
    assert ownership.refusal(data_dir, "serve") is not None  # the command line refuses root
    site = new_site(data_dir)
    try:
        assert site.services.db.read(staff.first)["username"] == "admin"  # the site opens
    finally:
        site.services.db.close()
