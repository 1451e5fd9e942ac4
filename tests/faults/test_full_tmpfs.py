"""A really full filesystem, not an injected error: a 16 MiB tmpfs mounted in a private
mount namespace (`unshare --mount`, so nothing outside the test sees it) holds the data
folder of a server on a loopback port (tests/faults/full_disk_child.py). Filled to the
last byte, /v2/health says `storage: full` and a database write is refused as DiskFull;
with the space back, health is ok and the write goes through, without a restart.

Mounting needs the right to make a mount namespace (root, or CAP_SYS_ADMIN): where it is
not given (most CI containers), the test is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _unshare_refusal() -> str | None:
    """Why a private mount namespace with a tmpfs cannot be had here, or None."""
    if shutil.which("unshare") is None:
        return "no `unshare` on this machine"
    probe = ["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs"]
    probe += ["tmpfs", "/mnt"]
    done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        return f"mounting is not allowed here: {done.stderr.strip() or done.returncode}"
    return None


@pytest.mark.slow
def test_a_really_full_filesystem_fails_health_and_recovers(tmp_path: Path) -> None:
    refusal = _unshare_refusal()
    if refusal is not None:
        print(f"skipped: {refusal}")
        pytest.skip(refusal)
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    command = ["unshare", "--mount", "--propagation", "private"]
    command += [sys.executable, "-m", "tests.faults.full_disk_child", str(mount_point)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"]["status"] == "ok", seen
    assert seen["filled"] > 0
    assert seen["write_while_full"] == "full"
    full = seen["while_full"]
    assert (full["status"], full["storage"], full["writer"]) == ("degraded", "full", "full")
    after = seen["after"]
    assert (after["status"], after["storage"], after["writer"]) == ("ok", "ok", "ok"), seen
    assert seen["write_after"] == "ok"
    assert list(mount_point.iterdir()) == []  # the tmpfs went with the namespace
