"""A disk that fills up, and a data folder that turns read-only, under the real server
(in this process, through HTTP): clear answers (507 for a full disk, 503 for a folder that
refuses writes, with the Status payload), nothing half-written, reads keep working, and the
server recovers by itself, without a restart, once space or write access returns."""

from __future__ import annotations

import asyncio
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from api.errors import FULL_MESSAGE, UNWRITABLE_MESSAGE
from tests.faults.disk import FULL, IO_ERROR, READ_ONLY, Disk, disk  # noqa: F401
from tests.world import World

FAULTS = [
    (FULL, 507, FULL_MESSAGE),
    (READ_ONLY, 503, UNWRITABLE_MESSAGE),
    (IO_ERROR, 503, UNWRITABLE_MESSAGE),
]


# The faulty disk is under the site from its first connection on.
pytestmark = pytest.mark.usefixtures("disk")


class Admin:
    """Clinic's org admin over HTTP, with a token minted before the disk fails (minting
    one writes a session)."""

    def __init__(self, world: World, token: str) -> None:
        assert world.api is not None
        self.api, self.token = world.api, token

    async def __call__(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        return await self.api.call(method, path, self.token, **kwargs)


async def admin_of(world: World) -> Admin:
    token = await world.token("org_admin")
    assert token is not None
    return Admin(world, token)


def data(world: World, path: str) -> str:
    return f"/v2/groups/{world.org_group_id}/data/{path}"


def files(world: World, path: str) -> str:
    return f"/v2/groups/{world.org_group_id}/files/{path}"


async def send(world: World, url: str, body: bytes) -> int:
    """The bytes of an upload, to its presigned URL."""
    assert world.api is not None
    parts = urllib.parse.urlsplit(url)
    response = await world.api.client.put(f"{parts.path}?{parts.query}", data=body)
    return response.status


async def fetch(world: World, url: str) -> bytes:
    assert world.api is not None
    parts = urllib.parse.urlsplit(url)
    response = await world.api.client.get(f"{parts.path}?{parts.query}")
    assert response.status == 200
    return await response.read()


def leftovers(world: World) -> list[Path]:
    """Temporary files and blobs on disk: none may stay from a refused upload."""
    store = world.site.services.blobs
    return [*store.tmp.glob("*"), *store.root.glob("*/*")]


@pytest.mark.parametrize(("fault", "status", "message"), FAULTS)
async def test_data_and_accounts_are_refused_clearly_then_written_once_the_disk_is_back(
    world: World,
    disk: Disk,  # noqa: F811
    fault: str,
    status: int,
    message: str,
) -> None:
    call = await admin_of(world)
    disk.fault = fault
    put = await call("PUT", data(world, "a/b"), json={"value": {"n": 1}})
    assert put == (status, {"message": message})
    user = {"email": "new@clinic.test", "username": "newcomer"}
    assert await call("POST", "/v2/users", json=user) == put
    assert (await call("GET", data(world, "a/b")))[0] == 404  # reads work, nothing written
    disk.fault = None  # space (or write access) returns: no restart
    assert (await call("PUT", data(world, "a/b"), json={"value": {"n": 1}}))[0] == 200
    assert (await call("POST", "/v2/users", json=user))[0] == 201
    got = await call("GET", data(world, "a/b"))
    assert (got[0], got[1]["data"]["value"]) == (200, {"n": 1})


@pytest.mark.parametrize(("fault", "status", "message"), FAULTS[:2])
async def test_an_upload_is_refused_whole_then_accepted_once_the_disk_is_back(
    world: World,
    disk: Disk,  # noqa: F811
    fault: str,
    status: int,
    message: str,
) -> None:
    call = await admin_of(world)
    disk.fault = fault
    assert await call("PUT", files(world, "x.bin"), json={}) == (status, {"message": message})
    disk.fault = None
    started = await call("PUT", files(world, "x.bin"), json={})
    body = b"the bytes of x" * 10_000
    disk.fault = fault  # the disk fails while the bytes arrive
    assert await send(world, started[1]["url"], body) == status
    assert leftovers(world) == []  # no temporary file, no blob
    assert (await call("GET", files(world, "x.bin")))[0] == 404
    disk.fault = None
    assert await send(world, started[1]["url"], body) == 200  # the same URL, again
    got = await call("GET", files(world, "x.bin"))
    assert await fetch(world, got[1]["url"]) == body


@pytest.mark.parametrize(("fault", "status"), [(FULL, 507), (READ_ONLY, 503)])
async def test_writes_running_when_the_disk_fails_are_either_whole_or_refused(
    world: World,
    disk: Disk,  # noqa: F811
    fault: str,
    status: int,
) -> None:
    call = await admin_of(world)
    outcomes: dict[int, int] = {}
    numbers = iter(range(100_000))
    stop = asyncio.Event()

    async def writer() -> None:  # one of several clients writing until told to stop
        while not stop.is_set():
            n = next(numbers)
            reply = await call("PUT", data(world, f"storm/{n}"), json={"value": {"n": n}})
            outcomes[n] = reply[0]

    async def until(condition: Any) -> None:
        while not condition():
            await asyncio.sleep(0.001)

    def refused() -> int:
        return sum(code != 200 for code in outcomes.values())

    async def fail_for_a_while() -> None:
        """Writes stored, then the disk fails under them until some are refused, then it
        recovers under them: however fast the machine, each phase sees writes."""
        await until(lambda: len(outcomes) >= 40)
        disk.fault = fault
        await until(lambda: refused() >= 10)
        disk.fault = None
        healed = len(outcomes)
        await until(lambda: len(outcomes) >= healed + 40)
        stop.set()

    await asyncio.wait_for(
        asyncio.gather(*(writer() for _ in range(16)), fail_for_a_while()), timeout=120
    )
    assert set(outcomes.values()) == {200, status}  # never a 500
    assert disk.refused > 0
    assert len(outcomes) < 1000  # one page holds them all
    stored = await call("GET", data(world, "storm"), params={"cascade": "true", "limit": "1000"})
    found = {entry["path"]: entry["value"] for entry in stored[1]["data"]}
    written = {f"/storm/{n}": {"n": n} for n, code in outcomes.items() if code == 200}
    assert found == written  # every acknowledged write, none of the refused ones
    assert await call("PUT", data(world, "after"), json={"value": 1}) == (
        200,
        {"message": "Success"},
    )
    integrity = world.site.services.db.read(lambda c: c.execute("PRAGMA integrity_check"))
    assert integrity.fetchall() == [("ok",)]


@pytest.mark.parametrize("parts", [None, 2])
async def test_a_refused_cleanup_of_an_upload_is_the_disks_refusal_not_a_500(
    world: World,
    disk: Disk,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    parts: int | None,
) -> None:
    """The folder turns read-only as the received bytes are placed (a whole file), or
    just after a part is placed (its row is then refused): removing what was received is
    refused too, and that refusal is mapped as every call of the store is (503), never
    an unmapped OSError (a 500). Once write access returns, the same URL takes the bytes."""
    call, store = await admin_of(world), world.site.services.blobs
    name = "place" if parts is None else "place_part"
    real = getattr(store, name)

    def then_read_only(*args: Any) -> Any:
        if parts is None:  # the rename into the store is refused
            disk.fault, disk.unlinks = READ_ONLY, True
            return real(*args)
        placed = real(*args)
        disk.fault, disk.unlinks = READ_ONLY, True  # placed; its row is refused
        return placed

    monkeypatch.setattr(store, name, then_read_only)
    body = {} if parts is None else {"num_parts": parts}
    started = await call("PUT", files(world, "x.bin"), json=body)
    url = started[1]["url"] if parts is None else started[1]["urls"][0]
    assert await send(world, url, b"the bytes") == 503
    monkeypatch.setattr(store, name, real)
    disk.fault, disk.unlinks = None, False
    assert await send(world, url, b"the bytes") == 200
