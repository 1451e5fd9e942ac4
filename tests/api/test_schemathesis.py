"""Schemathesis over every operation of the OpenAPI document, with every check it has
(`--checks all`: status codes, content types, response schemas, schema-valid requests
accepted and invalid ones refused, auth enforced), as staff, as an org admin and as a
device, against the real application on a loopback port.

The server runs in this test's event loop (so tests/documented.py checks its responses too);
the schemathesis CLI runs as a subprocess. The number of examples per operation is small
(EXAMPLES): `make test` runs each caller's examples and fuzzing with EVERYDAY examples, a
smoke pass of about ten seconds a caller, and `make test-long` (the `long` marker) with
EXAMPLES. The world's IDs are given as path parameters, so operations reach real resources
and not only 404s.

The coverage phase (every boundary and missing or wrong-typed value of every parameter,
every undocumented method of every path) takes several minutes a caller: it runs in
`make test-long` only.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from edge.app import ROUTES
from tests.world import World

EXAMPLES = 8
EVERYDAY = 3  # make test's smoke pass
ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("schemathesis.toml")
# Operations a caller cannot fuzz without ending its own session or password.
SELF_ENDING = ("logout", "set_password")
# Operations that answer until the client leaves (tests/api/test_events.py checks them).
ENDLESS = tuple(r.name for r in ROUTES if r.response_type == "text/event-stream")


def _parameters(world: World, who: str) -> dict[str, str]:
    ids = {
        "org_id": world.tenant.org_id,
        "project_id": world.project_id,
        "group_id": world.org_group_id,
        "role_id": world.org_role_id,
        "user_id": world.id("plain"),
        "device_id": world.id("device_plain"),
        "grantee_id": world.id("plain"),
        "account_id": world.id("plain"),
    }
    return {f"path.{name}": value for name, value in ids.items()}


def _config(tmp_path: Path, parameters: dict[str, str]) -> Path:
    lines = [CONFIG.read_text("utf-8"), "", "[parameters]"]
    lines += [f'"{key}" = "{value}"' for key, value in parameters.items()]
    # Deleting the world's organization would end every session of the run.
    lines += ["", "[[operations]]", 'include-operation-id = "delete_org_by_id"']
    lines += ['parameters = { "path.org_id" = "NoSuchOrg0000000" }']
    path = tmp_path / "schemathesis.toml"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


@pytest.fixture
async def base_url(aiohttp_server: Any, app: web.Application) -> str:
    server = await aiohttp_server(app)
    return str(server.make_url("")).rstrip("/")


PHASES = [
    # every change: examples and fuzzing, the fewest examples per operation
    pytest.param(
        "examples,fuzzing", EVERYDAY, marks=[pytest.mark.slow, pytest.mark.timeout(240)], id="smoke"
    ),
    # make test-long: examples and fuzzing with more examples, and the coverage phase
    # (every boundary, every undocumented method)
    pytest.param(
        "examples,fuzzing",
        EXAMPLES,
        marks=[pytest.mark.long, pytest.mark.timeout(480)],
        id="examples,fuzzing",
    ),
    pytest.param(
        "coverage", EXAMPLES, marks=[pytest.mark.long, pytest.mark.timeout(900)], id="coverage"
    ),
]


# A fuzzer writes as a device far faster than a device would: its pace (device_write_rate)
# would answer most of its writes 429. The pace has its own test
# (tests/api/test_device_write_rate.py); the 429 is in the document all the same.
@pytest.mark.world(device_write_rate=1_000_000, device_write_burst=1_000_000)
@pytest.mark.parametrize(("phases", "examples"), PHASES)
@pytest.mark.parametrize("who", ["staff", "org_admin", "device_member"])
async def test_schemathesis_every_operation(
    who: str, phases: str, examples: int, world: World, base_url: str, tmp_path: Path
) -> None:
    returncode, report = await _schemathesis(who, world, base_url, tmp_path, phases, examples)
    assert returncode == 0, _digest(report)


async def _schemathesis(
    who: str, world: World, base_url: str, tmp_path: Path, phases: str, examples: int
) -> tuple[int | None, str]:
    """Schemathesis run on the live server as `who`: its exit code and its report."""
    token = await world.token(who)
    config = _config(tmp_path, _parameters(world, who))
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(config),
        "run",
        f"{base_url}/v2/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(examples),
        "--phases",
        phases,
        "--no-shrink",
        "--seed",
        "14",
        "--header",
        f"Authorization: Bearer {token}",
        *(arg for op in (*SELF_ENDING, *ENDLESS) for arg in ("--exclude-operation-id", op)),
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.api.schemathesis_hooks"}
    env["PYTHONPATH"] = str(ROOT)
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    text = output.decode("utf-8", "replace")
    (tmp_path / "schemathesis.txt").write_text(text, "utf-8")
    return process.returncode, text


def _digest(text: str) -> str:
    """The failures (operation, check, status and the start of the body) and the summary:
    the full report, with its curl commands, is in the test's tmp_path."""
    lines = text.splitlines()
    kept = []
    for i, line in enumerate(lines):
        if re.match(r"^_{3,} .* _{3,}$|^- ST\d+|^\[\d{3}\]", line):
            kept.append(line[:300])
            if line.startswith("["):  # the body, after a blank line
                kept.extend(n[:300] for n in lines[i + 1 : i + 3] if n.strip())
    summary = text[text.find("=== SUMMARY") :] if "=== SUMMARY" in text else text[-3000:]
    return "\n".join(kept) + "\n" + summary[:6000]
