"""A device's HTTP writes are paced (#29): `device_write_burst` at once, then
`device_write_rate` a second, all its credentials together; past it a 429 with
Retry-After, and nothing written. One device's key looping twin PATCHes once stretched
every other caller's writes (the org admin's from 15 ms to 180 ms). People are not paced,
nor are a device's reads, nor another device's writes."""

from __future__ import annotations

import pytest

from tests.world import World

BURST = 3


def twin(world: World, device: str = "device_member") -> str:
    return f"/v2/devices/{world.id(device)}/twin"


async def reported(world: World, n: int, headers: dict[str, str]) -> tuple[int, object, str]:
    """A reported PATCH of device_member with its API key sent as these headers: (status,
    body, Retry-After)."""
    assert world.api is not None
    body = {"reported": {"n": n}}
    response = await world.api.client.patch(twin(world), json=body, headers=headers)
    return response.status, await response.json(), response.headers.get("Retry-After", "")


@pytest.mark.world(device_write_rate=1, device_write_burst=BURST)
async def test_a_device_writes_at_most_its_burst_then_its_rate(world: World) -> None:
    key = world.keys["device_member"]
    ways = [{"Authorization": f"Bearer {key}"}, {"X-API-Key": key}]  # one bucket for both
    for n in range(BURST):
        assert (await reported(world, n, ways[n % 2]))[0] == 200
    for headers in ways:
        status, body, retry_after = await reported(world, 99, headers)
        assert (status, retry_after) == (429, "1")
        assert body == {
            "message": "Too many writes from this device: at most 1 a second"
            " (device_write_rate), bursts of 3; retry in 1 s"
        }
    status, body = await world.call("device_member", "GET", twin(world))
    assert status == 200 and body["twin"]["reported"] == {
        "n": BURST - 1
    }  # the refused wrote nothing
    for n in range(BURST + 2):  # people are not paced, whoever's twin they write
        status, body = await world.call(
            "org_admin", "PATCH", twin(world), json={"desired": {"n": n}}
        )
        assert status == 200, body
    loner = twin(world, "device_loner")
    for n in range(BURST):  # another device has its own bucket
        assert (await world.call("device_loner", "PATCH", loner, json={"reported": {"n": n}}))[
            0
        ] == 200
