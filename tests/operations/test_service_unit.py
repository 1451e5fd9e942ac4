"""packaging/edge.service runs what docs/operating.md says: `edge serve --config
/etc/edge/edge.toml` with the packaged edge.toml, whose values nothing in the unit
overrides; `systemd-analyze verify` accepts the unit, the backup service and its timer."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edge.kernel.config_template import render

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"
UNITS = ("edge.service", "edge-backup.service", "edge-backup.timer")
BINARY = "/usr/bin/edge"
CONFIG = "/etc/edge/edge.toml"


def directives(name: str, unit: str = "edge.service") -> list[str]:
    return [
        line.split("=", 1)[1]
        for line in (PACKAGING / unit).read_text().splitlines()
        if line.startswith(f"{name}=")
    ]


def unit_command(tmp_path: Path, command: str, unit: str = "edge.service") -> list[str]:
    """The unit's ExecStart with this machine's config file and `command` for its own."""
    (exec_start,) = directives("ExecStart", unit)
    argv = shlex.split(exec_start)
    assert argv[0] == BINARY
    rest = [str(tmp_path / "edge.toml") if a == CONFIG else a for a in argv[2:]]
    return [sys.executable, "-m", "edge", command, *rest]


def environment() -> dict[str, str]:
    """The process environment the unit gives: the shell's less EDGE_*, plus Environment=."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    for line in directives("Environment"):
        name, _, value = line.partition("=")
        env[name] = value
    return env


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=environment(), capture_output=True, text=True, timeout=60)


def test_the_unit_makes_the_site_the_packaged_config_names(tmp_path: Path) -> None:
    (tmp_path / "edge.toml").write_text(render({"data_dir": tmp_path / "site"}))
    done = run(unit_command(tmp_path, "init"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "edge.db").exists()


def test_what_edge_toml_sets_is_what_the_server_uses(tmp_path: Path) -> None:
    """The log format and data folder the file names win: before, EDGE_LOG_FORMAT=json and
    --data-dir in the unit overrode them without a word."""
    site = tmp_path / "site"
    (tmp_path / "edge.toml").write_text(render({"data_dir": site, "log_format": "text"}))
    argv = unit_command(tmp_path, "backup")
    assert run(unit_command(tmp_path, "init")).returncode == 0
    done = run([*argv, str(tmp_path / "copy")])
    assert done.returncode == 0, done.stderr
    assert f"backing up {site} to" in done.stdout
    for value in (directives("Environment"), directives("ExecStart")):
        assert "json" not in " ".join(value) and "--data-dir" not in " ".join(value)


def test_the_config_file_of_the_unit_must_exist(tmp_path: Path) -> None:
    """A deleted edge.toml stops the unit with one line, rather than a site in the wrong
    place with the defaults."""
    done = run(unit_command(tmp_path, "init"))
    assert done.returncode == 2 and "cannot read config file" in done.stderr


def test_config_if_exists_reads_an_optional_file(tmp_path: Path) -> None:
    """What units written before the package pass (`--config-if-exists`): the defaults
    without the file, the file once it is there."""
    optional = tmp_path / "optional.toml"
    init = [sys.executable, "-m", "edge", "init", "--data-dir", str(tmp_path / "d")]
    assert run([*init, "--config-if-exists", str(optional)]).returncode == 0
    optional.write_text("port = 0\n")
    done = run([*init, "--config-if-exists", str(optional)])
    assert done.returncode == 2 and "invalid setting port in" in done.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd is not installed")
def test_systemd_analyze_verify_accepts_the_units(tmp_path: Path) -> None:
    edge = shutil.which("edge", path=str(Path(sys.executable).parent)) or sys.executable
    for unit in UNITS:
        (tmp_path / unit).write_text((PACKAGING / unit).read_text().replace(BINARY, edge))
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *(str(tmp_path / u) for u in UNITS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for unit in UNITS:
        assert unit not in done.stdout + done.stderr  # no complaint about our units
