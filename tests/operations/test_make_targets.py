"""`make run` installs only what serving needs: the test, lint and build tools are extras
that only `make test`, `make lint`/`typecheck` and `make binary` install."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# paho-mqtt is not among them: `edge agent` (edge_agent/) speaks MQTT with it.
TOOLS = ("pytest", "mypy", "ruff", "pyinstaller", "cyphermed", "aiosmtpd")


def planned(target: str, tmp_path: Path) -> list[str]:
    """The commands `make <target>` would run on a fresh checkout (a dry run)."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    done = subprocess.run(
        ["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def installs(commands: list[str]) -> list[str]:
    return [c for c in commands if re.search(r"pip install .*-e ", c)]


def test_serving_dependencies_hold_no_tool() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = [re.split(r"[=<>\[ ]", d)[0].lower() for d in project["dependencies"]]
    assert not set(names) & set(TOOLS)
    extras = project["optional-dependencies"]
    assert {re.split(r"[=<>]", d)[0] for e in extras.values() for d in e} >= set(TOOLS)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_installs_only_the_package(tmp_path: Path) -> None:
    commands = planned("run", tmp_path)
    assert [c.split()[-1] for c in installs(commands)] == ["."]
    assert any(c.rstrip().endswith("edge serve") for c in commands)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_wheel_builds_the_project_and_the_agent(tmp_path: Path) -> None:
    """The project's wheel (server and agent) and the agent's own (packaging/agent/)."""
    commands = planned("wheel", tmp_path)
    assert any(re.search(r"pip wheel --no-deps .*-w dist \.$", c) for c in commands)
    assert any(c.endswith("packaging/agent/build.py dist") for c in commands)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_passes_args_to_edge_serve(tmp_path: Path) -> None:
    """Flags after `make run` are make's own; edge's go in ARGS."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    done = subprocess.run(
        ["make", "-n", "run", "ARGS=--port 9000 --host 0.0.0.0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert any(
        c.endswith("edge serve --port 9000 --host 0.0.0.0") for c in done.stdout.splitlines()
    )


def test_the_build_asks_for_an_spdx_licence_setuptools_reads_without_warning() -> None:
    """A licence table made setuptools print a deprecation warning three times per install."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "LicenseRef-Proprietary"
    assert "setuptools>=77" in pyproject["build-system"]["requires"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_installs_the_tools(tmp_path: Path) -> None:
    (install,) = installs(planned("test", tmp_path))
    assert "test" in install and "build" in install
