"""The health probe's write check (storage/space.py): it leaves nothing in the folder,
whether the filesystem gives it a file without a name (O_TMPFILE) or not."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from storage import space


class _NoTmpfile:
    """`os` on a filesystem without O_TMPFILE."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def open(self, path: Any, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_TMPFILE == os.O_TMPFILE:
            raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP))
        return os.open(path, flags, mode)


def test_the_check_leaves_nothing_behind(tmp_path: Path) -> None:
    space.check_writable(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_without_o_tmpfile_the_named_file_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(space, "os", _NoTmpfile())
    space.check_writable(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_folder_is_neither_full_nor_unwritable(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        space.check_writable(tmp_path / "gone")
