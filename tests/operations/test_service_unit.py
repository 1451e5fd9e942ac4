"""packaging/edge.service works on a fresh install as docs/operating.md describes it: with
no /etc/edge/edge.toml the command it runs starts with the defaults (and reads the file
once it exists); `systemd-analyze verify` accepts the unit where systemd is installed."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "packaging" / "edge.service"
BINARY = "/usr/local/bin/edge"
CONFIG = "/etc/edge/edge.toml"
DATA = "/var/lib/edge"


def directives(name: str) -> list[str]:
    return [
        line.split("=", 1)[1]
        for line in UNIT.read_text().splitlines()
        if line.startswith(f"{name}=")
    ]


def unit_command(tmp_path: Path, command: str) -> list[str]:
    """The unit's ExecStart, with this machine's paths and `command` instead of serve."""
    (exec_start,) = directives("ExecStart")
    argv = shlex.split(exec_start)
    assert argv[:2] == [BINARY, "serve"]
    swapped = {CONFIG: str(tmp_path / "etc" / "edge.toml"), DATA: str(tmp_path / "data")}
    return [sys.executable, "-m", "edge", command, *(swapped.get(a, a) for a in argv[2:])]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    for line in directives("Environment"):
        name, _, value = line.partition("=")
        env[name] = value
    return env


def test_the_unit_starts_without_a_config_file(tmp_path: Path) -> None:
    assert "EDGE_CONFIG" not in environment()
    done = subprocess.run(
        unit_command(tmp_path, "init"),
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "edge.db").exists()


def test_the_unit_reads_the_config_file_once_it_exists(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "edge.toml").write_text("port = 0\n")
    done = subprocess.run(
        unit_command(tmp_path, "init"),
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "invalid setting port in" in done.stderr


def test_an_explicit_config_file_must_exist(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    command = [sys.executable, "-m", "edge", "init", "--data-dir", str(tmp_path / "d")]
    done = subprocess.run(
        [*command, "--config", str(missing)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "cannot read config file" in done.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd is not installed")
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    edge = shutil.which("edge", path=str(Path(sys.executable).parent)) or sys.executable
    unit = tmp_path / "edge.service"
    unit.write_text(UNIT.read_text().replace(BINARY, edge))
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "edge.service" not in done.stdout + done.stderr  # no complaint about the unit
