"""A Python client generated from /v2/openapi.json, with openapi-python-client (the generator
the public SDK came from) and its default settings, drives a short scenario against the real
server: sign in, create an organization and a group, put and get data, upload a file and read
it back (through the presigned URL, by the generated function too), read the site CA and
what a role holds.

It proves the document is complete enough for a generator: every model, body and operation
name the scenario needs is there, typed, and the responses parse into those models. The
generator must not warn (a warning means part of the document was left out of the client),
and the client raises on any status the document does not list for the operation. The
commands are those docs/openapi.md gives.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.conftest import STAFF_PASSWORD, Api

PACKAGE = "edge_client"  # named after the document's title, `edge`
PROJECT = "edge-client"


async def _generate(url: str, folder: Path) -> None:
    """`openapi-python-client generate --url URL`, nothing else; its post-hooks (ruff) are
    found beside the interpreter, as after `pip install openapi-python-client`."""
    command = [sys.executable, "-m", "openapi_python_client", "generate", "--url", url]
    tools = str(Path(sys.executable).parent)
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=folder,
        env={**os.environ, "PATH": tools + os.pathsep + os.environ.get("PATH", "")},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    said = output.decode()
    assert process.returncode == 0, said
    assert "warning" not in said.lower() and "error" not in said.lower(), said
    assert (folder / PROJECT / PACKAGE / "client.py").exists(), said


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[Path]:
    """Where the package is generated, importable for the test and forgotten after it."""
    sys.path.insert(0, str(tmp_path / PROJECT))
    yield tmp_path
    sys.path.remove(str(tmp_path / PROJECT))
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.{name}")


@pytest.mark.timeout(180)
async def test_a_client_generated_from_the_document_works(api: Api, generated: Path) -> None:
    base_url = str(api.client.make_url("")).rstrip("/")
    await _generate(f"{base_url}/v2/openapi.json", generated)
    models = _module("models")
    client_module = _module("client")
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
            grant_type=models.LoginFormParamsGrantType.PASSWORD,
            username="admin",
            password=STAFF_PASSWORD,
            **scope,
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
    signed = {name: values[0] for name, values in parse_qs(urlsplit(listed.url).query).items()}
    signed["expires"] = int(signed["expires"])  # type: ignore[assignment]
    fetched = await _module("api.files.download_presigned").asyncio(
        group_id, "scans/today.txt", client=await client(), **signed
    )
    assert fetched.payload.read() == content

    await _beyond_the_first_steps(models, client, scoped, staff)


async def _beyond_the_first_steps(models: ModuleType, client: Any, scoped: Any, staff: Any) -> None:
    """The responses a generator once left out (the site CA, a presigned download), the
    role holdings once missing from the document, and the entry points."""
    pem = await _module("api.devices.get_root_ca").asyncio(client=await client())
    assert isinstance(pem, str) and pem.startswith("-----BEGIN CERTIFICATE-----"), pem
    role = await _module("api.roles.create_role").asyncio(
        client=scoped, body=models.CreateRoleBody(name="Nurses")
    )
    held = await _module("api.roles.get_role_group_access").asyncio(role.role.id, client=scoped)
    assert isinstance(held, models.RoleGroupAccessList) and held.group_access == [], held
    index = await _module("api.system.get_interface_index").asyncio(client=await client())
    assert isinstance(index, models.InterfaceIndex) and index.name == "edge", index
    assert index.links.openapi.endswith("/v2/openapi.json")
    zones = _module("models.create_user_body_zoneinfo").CreateUserBodyZoneinfo
    assert {"GMT+0", "GMT-0", "GMT0", "Etc/GMT+1", "Etc/GMT-1"} <= {z.value for z in zones}
