"""What one caller may take of a device's commands (docs/commands.md, "Limits" and
"Canceling"; #29): at most `command_caller_rate_limit` of the device's minute, so neither a
lesser caller nor the device itself starves its admins; a byte budget counting what still
waits (anyone's) and the caller's own kept commands, with Retry-After saying when room
frees; and a queued command canceled by those who may update the device, its bytes freed
at once. The attack's findings 5 and 6 (one caller took a device's whole minute; queued
commands locked its budget for 8 days, with no way to clear them), at a small scale."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

from edge.commands.service import Commands
from edge.kernel import clock
from storage import commands as store
from tests.api.test_commands import AnsweringDevices, devices, path  # noqa: F401
from tests.api.test_devices import UPDATE
from tests.world import DEVICE_TARGETS, World, target_table

WEEK = 7 * 86400
BUDGET = 64 * 1024


def blob(size: int) -> dict[str, str]:
    """A payload of `size` bytes, as the budget counts it."""
    return {"p": "x" * (size - 9)}


@pytest.fixture
def away(world: World) -> Commands:
    """The devices are offline, each keeping a persistent session: queued commands wait."""
    commands = world.site.services.commands
    commands.notify = commands.notify_connected = lambda *_: 0
    commands.persistent = lambda _: True
    return commands


async def post(world: World, who: str, url: str, body: dict[str, Any]) -> tuple[int, Any, str]:
    """POST as `who`: status, body and the Retry-After header ('' without one)."""
    assert world.api is not None
    headers = {"Authorization": f"Bearer {await world.token(who)}"}
    response = await world.api.client.post(url, json=body, headers=headers)
    return response.status, await response.json(), response.headers.get("Retry-After", "")


async def cancel(world: World, who: str, target: str, request_id: str) -> tuple[int, Any]:
    return await world.call(who, "POST", path(world, target, f"/{request_id}/cancel"))


async def state_of(world: World, target: str, request_id: str) -> dict[str, Any]:
    status, found = await world.call("org_admin", "GET", path(world, target, f"/{request_id}"))
    assert status == 200, found
    command: dict[str, Any] = found["command"]
    return command


# -- the minute ------------------------------------------------------------------------------
async def test_one_caller_takes_at_most_its_share_of_a_devices_minute(
    world: World,
    devices: AnsweringDevices,  # noqa: F811
) -> None:
    """group_device_perms sent 60 a minute and the org admin got 429 minute after minute;
    now it gets command_caller_rate_limit (20) and the admin is answered each minute."""
    target = path(world, "device_member")
    for _ in range(3):
        got = [(await world.call("group_device_perms", "POST", target, json={"name": "x"}))[0]]
        got += [
            (await world.call("group_device_perms", "POST", target, json={"name": "x"}))[0]
            for _ in range(29)
        ]
        assert got == [200] * 20 + [429] * 10
        status, body = await world.call("org_admin", "POST", target, json={"name": "reboot"})
        assert status == 200, body
        clock.advance(timedelta(seconds=61))


async def test_the_device_itself_cannot_take_its_admins_minute(
    world: World,
    devices: AnsweringDevices,  # noqa: F811
) -> None:
    target = path(world, "device_member")
    got = [
        (await world.call("device_member", "POST", target, json={"name": "x"})) for _ in range(30)
    ]
    assert [status for status, _ in got] == [200] * 20 + [429] * 10
    assert got[-1][1] == {
        "message": "Too many commands: at most 20 per caller per device per minute"
        " (command_caller_rate_limit)"
    }
    status, body = await world.call("org_admin", "POST", target, json={"name": "reboot"})
    assert status == 200, body


@pytest.mark.world(command_rate_limit=4, command_caller_rate_limit=3)
async def test_a_refused_command_is_told_when_the_minute_frees(
    world: World,
    devices: AnsweringDevices,  # noqa: F811
) -> None:
    """Retry-After is when the first command counted turns a minute old, for the caller's
    share and for the device's whole minute alike (it was 60 whatever the wait)."""
    target = path(world, "device_member")
    assert (await post(world, "group_device_perms", target, {"name": "x"}))[0] == 200
    clock.advance(timedelta(seconds=10))
    for _ in range(2):
        assert (await post(world, "group_device_perms", target, {"name": "x"}))[0] == 200
    clock.advance(timedelta(seconds=20))
    status, body, retry = await post(world, "group_device_perms", target, {"name": "x"})
    assert (status, retry) == (429, "30"), body
    assert (await post(world, "org_admin", target, {"name": "x"}))[0] == 200
    clock.advance(timedelta(seconds=5))
    status, body, retry = await post(world, "device_member", target, {"name": "x"})
    assert (status, retry) == (429, "25") and "at most 4 per device" in body["message"]
    clock.advance(timedelta(seconds=25))
    assert (await post(world, "group_device_perms", target, {"name": "x"}))[0] == 200


# -- the bytes -------------------------------------------------------------------------------
@pytest.mark.world(command_device_bytes=BUDGET)
async def test_one_callers_waiting_commands_stop_at_its_share(world: World, away: Commands) -> None:
    """group_device_perms queued a week of commands up to the whole budget and refilled it
    as fast as the org admin canceled them: everyone else got 429 for a week. Now one
    caller's waiting commands hold at most half of command_device_bytes (past it, only
    it is refused, Retry-After when the first of them expires), the others' count at
    most half against anyone else, and several callers together lock no one out."""
    target = path(world, "device_member")
    fill = {"name": "fill", "queue": True, "ttl": WEEK, "payload": blob(16_000)}
    queued = []
    for _ in range(2):
        status, sent, _ = await post(world, "group_device_perms", target, fill)
        assert status == 202, sent
        queued.append(sent["command"]["request_id"])
    status, refused, retry = await post(world, "group_device_perms", target, fill)
    assert (status, retry) == (429, str(WEEK)), refused
    assert "share of 32768 (half of command_device_bytes)" in refused["message"], refused
    assert "canceled" in refused["message"]
    for who in ("org_admin", "org_admin", "group_admin", "group_admin"):
        status, sent, _ = await post(world, who, target, fill)
        assert status == 202, (who, sent)
    status, done = await cancel(world, "org_admin", "device_member", queued[0])
    assert status == 200, done
    assert done["command"]["state"] == "canceled" and done["command"]["payload"] == {}
    assert (await state_of(world, "device_member", queued[0]))["state"] == "canceled"
    assert (await post(world, "group_device_perms", target, fill))[0] == 202  # its share freed
    status, log = await world.call("org_admin", "GET", "/v2/audit?action=command_canceled")
    assert status == 200, log
    [event] = log["audit_events"]
    assert event["target_id"] == world.id("device_member")
    assert event["details"] == {"command_id": queued[0], "name": "fill"}
    listed = (await world.call("org_admin", "GET", target + "?state=canceled"))[1]["commands"]
    assert [c["request_id"] for c in listed] == [queued[0]]


@pytest.mark.world(command_device_bytes=BUDGET)
async def test_a_callers_own_finished_commands_count_until_swept(
    world: World, away: Commands
) -> None:
    """Others' expired commands count for nothing, before any sweep; the caller's own
    count until the sweep deletes them (what it keeps on the disk stays bounded). The
    Retry-After is when enough frees: here another's waiting command, at its expiry."""
    target = path(world, "device_member")
    for who, ttl in (("group_device_perms", 3600), ("group_device_perms", 60)):
        body = {"name": "fill", "queue": True, "ttl": ttl, "payload": blob(16_000)}
        assert (await post(world, who, target, body))[0] == 202
    for _ in range(2):
        body = {"name": "mine", "queue": True, "ttl": 60, "payload": blob(16_000)}
        assert (await post(world, "org_admin", target, body))[0] == 202
    clock.advance(timedelta(seconds=61))
    small = {"name": "reboot", "queue": True, "payload": blob(20_000)}
    status, refused, retry = await post(world, "org_admin", target, small)
    assert (status, retry) == (429, str(3600 - 61)), refused  # group's, at its expiry
    assert "command_retention_hours" in refused["message"], refused
    clock.advance(timedelta(seconds=3600))  # group's last one expires: nothing of others'
    body = {"name": "mine", "queue": True, "ttl": 60, "payload": blob(16_000)}
    assert (await post(world, "org_admin", target, body))[0] == 202
    clock.advance(timedelta(seconds=61))
    status, refused, retry = await post(world, "org_admin", target, small)
    assert status == 429 and int(retry) == 24 * 3600 + 60 - 3722, refused  # its own, swept
    clock.advance(timedelta(hours=24))
    assert (await post(world, "org_admin", target, small))[0] == 202


@pytest.mark.world(command_device_bytes=BUDGET)
async def test_replies_never_stop_their_caller_sending(
    world: World,
    devices: AnsweringDevices,  # noqa: F811
) -> None:
    """Three large replies counted against their caller's budget for a day, and nothing
    could free them (an answered command cannot be canceled): the org admin who asked a
    device for three log dumps could not send it a reboot for 24 h. Replies now count
    apart, against what the replies to the caller's commands may keep: past it a reply
    keeps its status and drops its payload, and the caller still sends."""
    devices.log = 21_800
    target = path(world, "device_member")
    for _ in range(3):
        status, sent, _ = await post(world, "org_admin", target, {"name": "logs"})
        assert status == 200 and "payload_dropped" not in sent["command"]["reply"], sent
    reboot = {"name": "reboot", "payload": blob(20_000)}
    status, sent, _ = await post(world, "org_admin", target, reboot)
    assert status == 200, sent
    assert sent["command"]["reply"] == {"status": 200, "payload": {}, "payload_dropped": True}
    clock.advance(timedelta(hours=24, seconds=1))
    status, sent, _ = await post(world, "org_admin", target, {"name": "logs"})
    assert status == 200 and "payload_dropped" not in sent["command"]["reply"], sent


@pytest.mark.world(command_device_bytes=BUDGET)
async def test_a_payload_larger_than_a_callers_share_is_a_413(world: World, away: Commands) -> None:
    """It would never fit: a 413 naming the budget, not a 429 to wait for (half of it
    was a 429 whose wait would never end)."""
    for size in (BUDGET + 1, BUDGET // 2 + 1):  # more than a caller's share: never fits
        body = {"name": "big", "queue": True, "payload": blob(size)}
        status, refused, retry = await post(world, "org_admin", path(world, "device_member"), body)
        assert (status, retry) == (413, "") and "command_device_bytes" in refused["message"]
        assert set(refused) == {"message"}
    body = {"name": "big", "queue": True, "payload": blob(BUDGET // 2)}
    assert (await post(world, "org_admin", path(world, "device_member"), body))[0] == 202


# -- canceling -------------------------------------------------------------------------------
@pytest.mark.parametrize(("who", "target", "expected"), target_table(UPDATE, DEVICE_TARGETS))
async def test_who_may_cancel_a_queued_command(
    world: World, away: Commands, who: str, target: str, expected: int
) -> None:
    body = {"name": "x", "queue": True}
    status, sent = await world.call("org_admin", "POST", path(world, target), json=body)
    assert status == 202, sent
    request_id = sent["command"]["request_id"]
    status, reply = await cancel(world, who, target, request_id)
    assert status == expected, reply
    state = (await state_of(world, target, request_id))["state"]
    if status == 200:
        assert reply["command"]["state"] == state == "canceled"
    else:
        assert set(reply) == {"message"} and state == "queued"


async def test_only_a_command_still_waiting_may_be_canceled(
    world: World,
    devices: AnsweringDevices,  # noqa: F811
) -> None:
    target = path(world, "device_member")
    status, answered = await world.call("org_admin", "POST", target, json={"name": "x"})
    assert status == 200, answered
    status, body = await cancel(world, "org_admin", "device_member", "nope")
    assert (status, body) == (404, {"message": "Command not found"})
    request_id = answered["command"]["request_id"]
    status, body = await cancel(world, "org_admin", "device_loner", request_id)
    assert (status, body) == (404, {"message": "Command not found"})
    status, body = await cancel(world, "org_admin", "device_member", request_id)
    assert status == 409 and body["message"].startswith("Command is answered:"), body
    world.site.services.commands.notify = lambda *_: 0  # queued ones stay queued
    ids = []
    for ttl in (60, 3600):
        body = {"name": "later", "queue": True, "ttl": ttl}
        status, sent = await world.call("org_admin", "POST", target, json=body)
        assert status == 202, sent
        ids.append(sent["command"]["request_id"])
    clock.advance(timedelta(seconds=61))
    status, body = await cancel(world, "org_admin", "device_member", ids[0])
    assert status == 409 and body["message"].startswith("Command is expired:"), body
    assert (await cancel(world, "org_admin", "device_member", ids[1]))[0] == 200
    status, body = await cancel(world, "org_admin", "device_member", ids[1])
    assert status == 409 and body["message"].startswith("Command is canceled:"), body


async def test_a_canceled_command_is_neither_delivered_nor_answered(
    world: World, away: Commands
) -> None:
    """Queued: no delivery reads it. Delivered, then canceled: the device's reply that
    comes later is ignored."""
    device_id = world.id("device_member")
    target = path(world, "device_member")
    body = {"name": "x", "queue": True}
    first = (await world.call("org_admin", "POST", target, json=body))[1]["command"]
    assert (await cancel(world, "org_admin", "device_member", first["request_id"]))[0] == 200
    waiting = world.site.services.db.read(
        lambda c: store.waiting_for(c, device_id, clock.now_iso(), 100)
    )
    assert waiting == []
    topics: list[str] = []
    away.notify = lambda _device, topic, _payload: topics.append(topic) or 1
    world.site.services.devices.presence.opened(device_id, world.tenant.org_id)
    second = (await world.call("org_admin", "POST", target, json=body))[1]["command"]
    for _ in range(100):  # the delivery runs on the loop: a bounded number of its steps
        if (await state_of(world, "device_member", second["request_id"]))["state"] != "queued":
            break
        await asyncio.sleep(0)
    assert [t.rsplit("/", 1)[-1] for t in topics] == [second["request_id"]]
    assert (await state_of(world, "device_member", second["request_id"]))["state"] == "delivered"
    assert (await cancel(world, "org_admin", "device_member", second["request_id"]))[0] == 200
    reply = json.dumps({"status": 200, "payload": {"late": True}}).encode()
    await away.reply(device_id, f"{topics[0]}/reply", reply)
    found = await state_of(world, "device_member", second["request_id"])
    assert found["state"] == "canceled" and "reply" not in found
