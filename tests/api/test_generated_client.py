"""A Python client generated from /v2/openapi.json, with openapi-python-client (the generator
the public SDK came from), drives a short scenario against the real server: sign in, create
an organization and a group, put and get data, upload a file and read it back.

It proves the document is complete enough for a generator: every model, body and operation
name the scenario needs is there, typed, and the responses parse into those models. The
client raises on any status the document does not list for the operation.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.conftest import STAFF_PASSWORD, Api

PACKAGE = "edge_generated_client"
# Enums as literals: time zone names such as GMT+0 and GMT-0 make clashing Python names.
CONFIG = "literal_enums: true\npost_hooks: []\n"


async def _generate(document: dict[str, Any], folder: Path) -> None:
    (folder / "openapi.json").write_text(json.dumps(document), "utf-8")
    (folder / "config.yml").write_text(CONFIG, "utf-8")
    command = [sys.executable, "-m", "openapi_python_client", "generate"]
    command += ["--path", "openapi.json", "--output-path", PACKAGE, "--meta", "none"]
    command += ["--config", "config.yml"]
    process = await asyncio.create_subprocess_exec(
        *command, cwd=folder, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    assert (folder / PACKAGE / "client.py").exists(), output.decode()


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[Path]:
    """Where the package is generated, importable for the test and forgotten after it."""
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.{name}")


@pytest.mark.timeout(180)
async def test_a_client_generated_from_the_document_works(api: Api, generated: Path) -> None:
    status, document = await api.call("GET", "/v2/openapi.json")
    assert status == 200
    await _generate(document, generated)
    models = _module("models")
    client_module = _module("client")
    base_url = str(api.client.make_url("")).rstrip("/")
    async with contextlib.AsyncExitStack() as clients:

        async def client(token: str | None = None) -> Any:
            """A client of the generated package, closed when the test ends."""
            if token is None:
                made = client_module.Client(base_url=base_url, raise_on_unexpected_status=True)
            else:
                made = client_module.AuthenticatedClient(
                    base_url=base_url, token=token, raise_on_unexpected_status=True
                )
            return await clients.enter_async_context(made)

        await _scenario(models, client)


async def _scenario(models: ModuleType, client: Any) -> None:

    login = _module("api.auth.login")

    async def sign_in(**scope: str) -> str:
        body = models.LoginFormParams(
            grant_type="password", username="admin", password=STAFF_PASSWORD, **scope
        )
        token = await login.asyncio(client=await client(), body=body)
        assert isinstance(token, models.TokenInfo), token
        return str(token.access_token)

    staff = await client(await sign_in())
    made = await _module("api.orgs.create_org").asyncio(
        client=staff, body=models.CreateOrgBody(name="Clinic", alias="clinic")
    )
    assert isinstance(made, models.NewOrgInfo), made
    org_id = made.org.id

    scoped = await client(await sign_in(scope=org_id))
    group = await _module("api.groups.create_group").asyncio(
        client=scoped, body=models.CreateGroupBody(name="Ward", tags=["icu"])
    )
    assert isinstance(group, models.NewGroupInfo), group
    group_id = group.group.id
    found = await _module("api.groups.get_group_by_id").asyncio(group_id, client=scoped)
    assert isinstance(found, models.AdminGroupInfo | models.GroupInfo), found
    assert found.group.name == "Ward" and found.group.tags == ["icu"]

    value = {"pulse": 72, "notes": ["steady"]}
    stored = await _module("api.data.put_json_data").asyncio(
        group_id, "vitals/today", client=scoped, body=models.UploadDataBody(value=value)
    )
    assert isinstance(stored, models.Success), stored
    read = await _module("api.data.get_json_data").asyncio(group_id, "vitals/today", client=scoped)
    assert isinstance(read, models.DataAtPath), read
    assert isinstance(read.data, models.DataSchema)
    assert read.data.path == "/vitals/today" and read.data.value == value

    content = b"scan bytes\n" * 100
    started = await _module("api.files.put_files_data").asyncio(
        group_id,
        "scans/today.txt",
        client=scoped,
        body=models.PutFilesBody(content_type="text/plain"),
    )
    assert isinstance(started, models.FilesUrlForPath) and started.url, started
    async with httpx.AsyncClient() as raw:  # the presigned URL carries its own signature
        uploaded = await raw.put(started.url, content=content)
    assert uploaded.status_code == 200, uploaded.text
    listed = await _module("api.files.get_files_data").asyncio(
        group_id, "scans/today.txt", client=scoped
    )
    assert isinstance(listed, models.FilesAtPath), listed
    assert listed.file.size == len(content) and listed.file.content_type == "text/plain"
    async with httpx.AsyncClient() as raw:
        downloaded = await raw.get(listed.url)
    assert downloaded.content == content
