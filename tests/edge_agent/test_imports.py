"""The agent stands alone: no module of `edge_agent/` imports the server (`edge`, `api`,
`storage`, `embedded_broker`), and nothing but the standard library, paho-mqtt, aiohttp
and cryptography, the three requirements of the `edge-agent` distribution
(packaging/agent/). Read
with `ast`, as tests/test_architecture.py reads the house: imports inside functions and
under TYPE_CHECKING count."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.test_architecture import Import, _imports_of

REPO = Path(__file__).resolve().parents[2]
SERVER = {"edge", "api", "storage", "embedded_broker"}
REQUIRED = {"paho", "aiohttp", "cryptography"}  # the requirements' top-level packages


def agent_imports(root: Path = REPO) -> list[Import]:
    return [i for p in sorted((root / "edge_agent").rglob("*.py")) for i in _imports_of(p, root)]


def outside(imports: list[Import]) -> list[str]:
    """Each import of the server or of a package the agent does not require."""
    allowed = set(sys.stdlib_module_names) | REQUIRED | {"edge_agent", "__future__"}
    out = []
    for item in imports:
        top = item.target.split(".")[0]
        if top in SERVER or top not in allowed:
            out.append(f"{item.module}:{item.line} imports {item.target}")
    return out


def test_the_agent_imports_nothing_of_the_server_and_only_its_requirements() -> None:
    imports = agent_imports()
    assert {i.module for i in imports} >= {"edge_agent.agent", "edge_agent.link"}  # it read them
    assert outside(imports) == []


@pytest.mark.parametrize(
    "source",
    [
        "from edge.kernel import clock\n",
        "def later():\n    import storage.users\n",
        "import typing\nif typing.TYPE_CHECKING:\n    from api import errors\n",
        "import embedded_broker\n",
        "import amqtt.client\n",  # the server's broker library: not the agent's
    ],
)
def test_an_import_of_the_server_or_of_another_package_is_caught(
    tmp_path: Path, source: str
) -> None:
    (tmp_path / "edge_agent").mkdir()
    (tmp_path / "edge_agent" / "__init__.py").write_text("import json\nimport paho.mqtt\n")
    (tmp_path / "edge_agent" / "extra.py").write_text(source)
    found = outside(agent_imports(tmp_path))
    assert len(found) == 1 and found[0].startswith("edge_agent.extra:"), found
