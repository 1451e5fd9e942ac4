"""Build the `edge-agent` distribution: dist/edge_agent-<version>-py3-none-any.whl.

The device agent (`edge_agent/`, docs/agent.md) alone, with only what it imports as
requirements: paho-mqtt, aiohttp and cryptography (the device's own key and CSR, for
provisioning: it has binary wheels for x86-64, aarch64 and armv7l), pinned as the
project's pyproject.toml pins them (one place for versions). Its commands: `edge agent`
(an `edge` command holding only `agent` and `version`) and `edge-agent`. The project's
own wheel holds the agent too, beside the server; a device needs only this one.

Usage: python packaging/agent/build.py [DIST]   (DIST: where the wheel goes; default dist)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIRES = (
    "aiohttp",
    "paho-mqtt",
    "cryptography",
)  # what edge_agent imports (tests/edge_agent/test_imports.py)

PYPROJECT = """\
[build-system]
requires = ["setuptools>=77", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "edge-agent"
version = "{version}"
description = "The edge device agent: provisioning, twins, commands, jobs and tunnels."
requires-python = ">=3.11"
license = "LicenseRef-Proprietary"
dependencies = [{dependencies}]

[project.scripts]
edge = "edge_agent.cli:edge_main"
edge-agent = "edge_agent.cli:main"

[tool.setuptools.packages.find]
include = ["edge_agent", "edge_agent.*"]
"""


def pins() -> tuple[str, list[str]]:
    """The project's version, and its pins of the agent's requirements."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    named = {re.split(r"[=<>~ \[]", d)[0].lower(): d for d in project["dependencies"]}
    return str(project["version"]), [named[name] for name in REQUIRES]


def build(dist: Path) -> Path:
    version, requirements = pins()
    with tempfile.TemporaryDirectory(prefix="edge-agent-") as tree:
        source = Path(tree)
        shutil.copytree(
            ROOT / "edge_agent", source / "edge_agent", ignore=shutil.ignore_patterns("__pycache__")
        )
        text = PYPROJECT.format(
            version=version, dependencies=", ".join(f'"{r}"' for r in requirements)
        )
        (source / "pyproject.toml").write_text(text)
        dist.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist)]
        subprocess.run([*command, str(source)], check=True)
    return dist / f"edge_agent-{version}-py3-none-any.whl"


if __name__ == "__main__":
    built = build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist")
    print(built)
