"""The `edge-agent` distribution (packaging/agent/build.py, `make wheel`): a wheel of the
agent alone that requires only paho-mqtt, aiohttp and cryptography (the device's key and
CSR, provisioning), as the project pins them, with the
`edge agent` and `edge-agent` commands; imported from the wheel, it loads nothing of the
server. The long test installs it into a fresh virtual environment, from the wheel and
the local package index, and runs it there."""

from __future__ import annotations

import email.parser
import importlib.util
import json
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SERVER = ("edge", "api", "storage", "embedded_broker", "apsw", "amqtt", "PIL")


def _builder() -> object:
    spec = importlib.util.spec_from_file_location("agent_build", REPO / "packaging/agent/build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built: Path = _builder().build(tmp_path_factory.mktemp("dist"))  # type: ignore[attr-defined]
    assert built.is_file()
    return built


def metadata(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(f"edge_agent-0.1.0.dist-info/{name}").decode()


def test_the_wheel_holds_the_agent_and_requires_only_what_it_imports(wheel: Path) -> None:
    assert wheel.name == "edge_agent-0.1.0-py3-none-any.whl"
    fields = email.parser.Parser().parsestr(metadata(wheel, "METADATA"))
    assert fields["Name"] == "edge-agent"
    assert fields.get_all("Requires-Dist") == [
        "aiohttp==3.14.5",
        "paho-mqtt==2.2.0",
        "cryptography==50.0.2",
    ]
    scripts = metadata(wheel, "entry_points.txt")
    assert "edge = edge_agent.cli:edge_main" in scripts
    assert "edge-agent = edge_agent.cli:main" in scripts
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
    assert tops == {"edge_agent", "edge_agent-0.1.0.dist-info"}


IMPORT_ALL = """
import json, pkgutil, sys
sys.path.insert(0, sys.argv[1])
import edge_agent
for module in pkgutil.walk_packages(edge_agent.__path__, "edge_agent."):
    __import__(module.name)
loaded = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"file": edge_agent.__file__, "loaded": loaded}))
"""


def test_every_module_imports_from_the_wheel_without_the_server(
    wheel: Path, tmp_path: Path
) -> None:
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path / "unpacked")
    done = subprocess.run(
        [sys.executable, "-I", "-c", IMPORT_ALL, str(tmp_path / "unpacked")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["file"].startswith(str(tmp_path / "unpacked"))
    assert {"edge_agent", "paho", "aiohttp", "cryptography"} <= set(seen["loaded"])
    assert set(seen["loaded"]) & set(SERVER) == set()


@pytest.mark.long
@pytest.mark.timeout(600)
def test_the_wheel_installs_alone_and_runs(wheel: Path, tmp_path: Path) -> None:
    """In a fresh environment: only the agent and what paho-mqtt, aiohttp and cryptography
    need."""
    venv.create(tmp_path / "env", with_pip=True)
    python = tmp_path / "env" / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=500)
    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    )
    names = {entry["name"].lower() for entry in json.loads(listed.stdout)}
    assert {"edge-agent", "aiohttp", "paho-mqtt", "cryptography"} <= names
    assert names & {"apsw", "amqtt", "pillow", "uvloop", "edge"} == set()
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"server": "http://x"}))
    done = subprocess.run(
        [tmp_path / "env" / "bin" / "edge", "agent", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.startswith("edge agent: ")
