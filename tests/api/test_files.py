"""Files: single-part and multipart round trips through real HTTP, validation, expiry,
tampering, redirects, ranges and conditional requests."""

from __future__ import annotations

import os

from tests.api.files_world import (  # noqa: F401 (fixtures are used by name)
    World,
    data_dir,
    files_world_template,
    md5,
    world_fixture,
)


async def test_single_part_round_trip(world: World) -> None:
    data = os.urandom(100_000)
    status, reply = await world.files(
        "editor", "PUT", "/scans/a.bin", json={"content_type": "application/x-test"}
    )
    assert status == 200, reply
    assert set(reply) == {"url"}
    status, etag, _ = await world.send(reply["url"], data)
    assert (status, etag) == (200, f'"{md5(data)}"')
    status, body = await world.files("reader", "GET", "scans/a.bin")
    assert status == 200, body
    assert body["file"]["etag"] == md5(data)
    status, got, headers = await world.fetch(body["url"])
    assert status == 200 and got == data
    assert headers["ETag"] == f'"{md5(data)}"'
    assert headers["Content-Type"] == "application/x-test"
