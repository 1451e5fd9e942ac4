"""Who may send and read a device's commands (docs/commands.md; #29): those who may update
the device, every caller of the world (tests/world.py) against each target device,
denials beside grants; bodies that break the rules.

The devices are marked online as the broker marks them, and answer at once through the
server's reply path (`Commands.reply`, what the broker calls for a device's reply): the
MQTT path itself is tests/embedded_broker/test_commands.py's."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

from edge.kernel import clock
from tests.api.test_devices import UPDATE
from tests.world import DEVICE_TARGETS, World, target_table


class AnsweringDevices:
    """Every device answers each command at once with `{"status": 200}` and its name
    (and `log`, that many bytes of it, when set: a large reply)."""

    def __init__(self, world: World) -> None:
        self.commands = world.site.services.commands
        self.sent: list[str] = []
        self.replies: list[asyncio.Future[None]] = []
        self.log = 0

    def __call__(self, device_id: str, topic: str, payload: bytes) -> int:
        name = json.loads(payload)["name"]
        self.sent.append(device_id)
        answer = {"ran": name, "log": "x" * self.log} if self.log else {"ran": name}
        reply = json.dumps({"status": 200, "payload": answer}).encode()
        # the broker's inbox awaits the reply; notify is called synchronously
        self.replies.append(
            asyncio.ensure_future(self.commands.reply(device_id, f"{topic}/reply", reply))
        )
        return 1


@pytest.fixture
def devices(world: World) -> AnsweringDevices:
    answering = AnsweringDevices(world)
    world.site.services.commands.notify = answering
    world.site.services.commands.notify_connected = answering
    presence = world.site.services.devices.presence
    for target in DEVICE_TARGETS:
        presence.opened(world.id(target), world.tenant.org_id)
    return answering


def path(world: World, target: str, tail: str = "") -> str:
    return f"/v2/devices/{world.id(target)}/commands{tail}"


@pytest.mark.parametrize(("who", "target", "expected"), target_table(UPDATE, DEVICE_TARGETS))
async def test_who_may_send_a_command(
    world: World, devices: AnsweringDevices, who: str, target: str, expected: int
) -> None:
    status, body = await world.call(who, "POST", path(world, target), json={"name": "ping"})
    assert status == expected, body
    if status == 200:
        assert body["command"]["reply"] == {"status": 200, "payload": {"ran": "ping"}}
        assert devices.sent == [world.id(target)]
    else:
        assert set(body) == {"message"} and devices.sent == []


@pytest.mark.parametrize(("who", "target", "expected"), target_table(UPDATE, DEVICE_TARGETS))
async def test_who_may_read_commands(
    world: World, devices: AnsweringDevices, who: str, target: str, expected: int
) -> None:
    status, sent = await world.call("org_admin", "POST", path(world, target), json={"name": "x"})
    assert status == 200, sent
    request_id = sent["command"]["request_id"]
    status, listed = await world.call(who, "GET", path(world, target))
    assert status == expected, listed
    status, one = await world.call(who, "GET", path(world, target, f"/{request_id}"))
    assert status == expected, one
    if status == 200:
        assert [c["request_id"] for c in listed["commands"]] == [request_id]
        assert one["command"]["state"] == "answered"


BAD: list[tuple[dict[str, Any], int, str]] = [
    ({}, 406, "name"),
    ({"name": "  "}, 400, "name: must not be empty"),
    ({"name": "x", "timeout": 0}, 400, "timeout: must be a whole number of seconds from 1 to 60"),
    ({"name": "x", "timeout": 61}, 400, "timeout: must be a whole number of seconds from 1 to 60"),
    ({"name": "x", "timeout": "5"}, 406, "timeout"),
    ({"name": "x", "queue": True, "ttl": 604801}, 400, "ttl: must be a whole number of seconds"),
    ({"name": "x", "ttl": 60}, 400, "ttl: applies only with queue true"),
    ({"name": "x", "payload": [1]}, 406, "payload"),
    ({"name": "x", "other": 1}, 406, "other"),
]


@pytest.mark.parametrize(("body", "status", "field"), BAD)
async def test_bodies_that_break_the_rules(
    world: World, devices: AnsweringDevices, body: dict[str, Any], status: int, field: str
) -> None:
    got, reply = await world.call("org_admin", "POST", path(world, "device_member"), json=body)
    assert (got, set(reply)) == (status, {"message"}), reply
    assert field in reply["message"] and devices.sent == []


# What the attacker sent an offline device (#29): each got the offline 409, not its 400.
ODD: list[tuple[dict[str, Any], int, str]] = [
    ({"name": "x", "timeout": 1e300}, 400, "timeout: must be a whole number of seconds"),
    ({"name": "x", "queue": True, "ttl": 2**70}, 400, "ttl: must be a whole number of seconds"),
    ({"name": "", "queue": True}, 400, "name: must not be empty"),
]


@pytest.mark.parametrize("queue", [False, True])
@pytest.mark.parametrize(("body", "status", "field"), BAD + ODD)
async def test_a_body_is_checked_before_whether_the_device_is_online(
    world: World, body: dict[str, Any], status: int, field: str, queue: bool
) -> None:
    """An offline device (none is marked online here), queued or not: a body that breaks
    a rule gets the answer naming its field, as to an online device, not the 409 that
    says the device is offline (the caller fixes the body first)."""
    sent = {"queue": True, **body} if queue and "ttl" not in body else body
    got, reply = await world.call("org_admin", "POST", path(world, "device_member"), json=sent)
    assert (got, set(reply)) == (status, {"message"}), reply
    assert field in reply["message"], reply


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"name": "x"}, "Device is offline: send with queue true"),
        ({"name": "x", "queue": True}, "Device is offline and keeps no persistent session"),
    ],
)
async def test_a_valid_body_to_an_offline_device_is_still_a_409(
    world: World, body: dict[str, Any], words: str
) -> None:
    got, reply = await world.call("org_admin", "POST", path(world, "device_member"), json=body)
    assert (got, reply) == (409, {"message": reply["message"]}) and words in reply["message"]
    _, listed = await world.call("org_admin", "GET", path(world, "device_member"))
    assert listed["commands"] == []  # nothing recorded


@pytest.mark.parametrize(
    ("who", "target", "expected"),
    [
        ("other_admin", "device_member", 404),
        ("project_admin", "device_loner", 404),
        ("owner", "device_member", 403),
        ("project_admin", "device_boss", 403),
    ],
)
async def test_the_rights_come_before_the_body(
    world: World, who: str, target: str, expected: int
) -> None:
    """A caller who may not send to the device learns nothing of its rules from a bad
    body: its 404 or 403, as for a good one."""
    bad = {"name": "", "timeout": 1e300}
    got, reply = await world.call(who, "POST", path(world, target), json=bad)
    assert (got, set(reply)) == (expected, {"message"}), reply


async def test_an_unknown_command_and_another_devices_are_404(
    world: World, devices: AnsweringDevices
) -> None:
    status, sent = await world.call(
        "org_admin", "POST", path(world, "device_member"), json={"name": "x"}
    )
    request_id = sent["command"]["request_id"]
    for target, tail in (("device_loner", f"/{request_id}"), ("device_member", "/nope")):
        status, body = await world.call("org_admin", "GET", path(world, target, tail))
        assert (status, body) == (404, {"message": "Command not found"})


async def test_a_suspended_device_gets_no_command(world: World, devices: AnsweringDevices) -> None:
    device = path(world, "device_loner")
    status, _ = await world.call(
        "org_admin", "PATCH", f"/v2/devices/{world.id('device_loner')}", json={"is_active": False}
    )
    assert status == 200
    status, body = await world.call("org_admin", "POST", device, json={"name": "x"})
    assert status == 409 and "not active" in body["message"] and devices.sent == []
    status, body = await world.call("org_admin", "POST", device, json={"name": "x", "ttl": 9})
    assert (status, body) == (400, {"message": "ttl: applies only with queue true"})


async def test_the_list_pages_newest_first(world: World, devices: AnsweringDevices) -> None:
    """In the shared list conventions (docs/conventions.md): a signed `last_evaluated_key`
    object, sent back JSON-encoded; `object_count`; filters. Two commands of the same
    instant page by request ID, neither lost."""
    for name in ("one", "two", "three", "four"):
        status, body = await world.call(
            "org_admin", "POST", path(world, "device_member"), json={"name": name}
        )
        assert status == 200, body
        if name != "three":
            clock.advance(timedelta(seconds=1))  # three and four: the same instant
    pages, after = [], None
    while True:
        query = {"limit": "2", **({"last_evaluated_key": json.dumps(after)} if after else {})}
        status, reply = await world.call(
            "org_admin", "GET", path(world, "device_member"), params=query
        )
        assert status == 200, reply
        pages.append([c["name"] for c in reply["commands"]])
        after = reply.get("last_evaluated_key")
        if after is None:
            break
        assert isinstance(after, dict) and {"id", "sig"} <= set(after)
    assert sorted(pages[0]) == ["four", "three"] and pages[1:] == [["two", "one"]]
    device = path(world, "device_member")
    status, reply = await world.call("org_admin", "GET", device, params={"object_count": "true"})
    assert status == 200 and reply == {"object_count": 4}, reply
    status, reply = await world.call("org_admin", "GET", device, params={"name": "two"})
    assert status == 200 and [c["name"] for c in reply["commands"]] == ["two"], reply
    status, reply = await world.call("org_admin", "GET", device, params={"desc": "false"})
    assert [c["name"] for c in reply["commands"]][0] == "one"
    status, reply = await world.call(
        "org_admin",
        "GET",
        device,
        params={"last_evaluated_key": reply["commands"][0]["request_id"]},
    )
    assert status == 400 and "last_evaluated_key" in reply["message"], reply
    status, reply = await world.call("org_admin", "GET", device, params={"payload": "x"})
    assert status == 400 and "payload" in reply["message"], reply


async def test_search_is_a_400_naming_it_not_an_empty_list(
    world: World, devices: AnsweringDevices
) -> None:
    """Commands have no full-text index: `?search=` answered an empty list, as if nothing
    matched, though a command of that name was there. It and `search_fields` are now a 400
    naming the parameter, and the OpenAPI document does not offer them."""
    device = path(world, "device_member")
    status, body = await world.call("org_admin", "POST", device, json={"name": "reboot"})
    assert status == 200, body
    for params in ({"search": "reboot"}, {"search_fields": "name"}, {"search": ""}):
        status, reply = await world.call("org_admin", "GET", device, params=params)
        assert status == 400, (params, reply)
        assert set(reply) == {"message"} and next(iter(params)) in reply["message"], reply
    status, reply = await world.call("org_admin", "GET", device, params={"name_contains": "boo"})
    assert status == 200 and [c["name"] for c in reply["commands"]] == ["reboot"], reply
    status, document = await world.call("anonymous", "GET", "/v2/openapi.json")
    assert status == 200, document
    operation = document["paths"]["/v2/devices/{device_id}/commands"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"limit", "order_by", "name"} <= names and not names & {"search", "search_fields"}


@pytest.mark.world(command_caller_rate_limit=60)
async def test_the_rate_limit_is_per_minute_and_per_device(
    world: World, devices: AnsweringDevices
) -> None:
    """command_rate_limit is 60: the 61st within a minute is refused; another device's
    count is its own; a minute later the device may be sent commands again (one caller's
    share is raised to the whole minute here: tests/api/test_command_shares.py has it)."""
    clock.freeze()  # the sixty are within one minute however long a loaded machine takes
    commands = world.site.services.commands
    assert commands.limits.rate_per_minute == 60
    for _ in range(60):
        status, body = await world.call(
            "org_admin", "POST", path(world, "device_member"), json={"name": "x"}
        )
        assert status == 200, body
    status, body = await world.call(
        "org_admin", "POST", path(world, "device_member"), json={"name": "x"}
    )
    assert status == 429 and body == {
        "message": "Too many commands: at most 60 per device per minute"
    }
    status, _ = await world.call(
        "org_admin", "POST", path(world, "device_loner"), json={"name": "x"}
    )
    assert status == 200
    clock.advance(timedelta(seconds=61))
    status, _ = await world.call(
        "org_admin", "POST", path(world, "device_member"), json={"name": "x"}
    )
    assert status == 200


async def test_finished_commands_are_kept_for_the_retention_then_deleted(
    world: World, devices: AnsweringDevices
) -> None:
    commands = world.site.services.commands
    assert commands.limits.retention_hours == 24
    status, body = await world.call(
        "org_admin", "POST", path(world, "device_member"), json={"name": "x"}
    )
    assert status == 200
    one = path(world, "device_member", f"/{body['command']['request_id']}")
    clock.advance(timedelta(hours=23))
    assert await commands.sweep() == (0, 0)
    assert (await world.call("org_admin", "GET", one))[0] == 200
    clock.advance(timedelta(hours=2))
    assert await commands.sweep() == (0, 1)
    assert (await world.call("org_admin", "GET", one))[0] == 404


@pytest.mark.world(command_device_bytes=64 * 1024)
async def test_a_devices_commands_keep_at_most_their_byte_budget(
    world: World, devices: AnsweringDevices
) -> None:
    """command_device_bytes bounds the payloads and replies a caller's commands to a
    device keep, for every caller: the device sending commands to itself too (#29 F3: 250
    KB commands, 60 a minute for 7 days, filled the disk). Room frees as finished commands
    are swept; another caller's finished commands are not counted against it (#29)."""
    commands = world.site.services.commands
    body = {"name": "fill", "payload": {"blob": "x" * 20_000}}
    for _ in range(3):
        status, sent = await world.call(
            "device_member", "POST", path(world, "device_member"), json=body
        )
        assert status == 200, sent
    status, refused = await world.call(
        "device_member", "POST", path(world, "device_member"), json=body
    )
    assert status == 429 and "command_device_bytes" in refused["message"], refused
    status, sent = await world.call("org_admin", "POST", path(world, "device_member"), json=body)
    assert status == 200, sent  # the device's finished commands are its own, not the admin's
    listed = (await world.call("org_admin", "GET", path(world, "device_member")))[1]["commands"]
    assert len(listed) == 4  # the refused command is not recorded
    status, other = await world.call("org_admin", "POST", path(world, "device_loner"), json=body)
    assert status == 200, other  # another device's budget is its own
    clock.advance(timedelta(hours=25))
    assert await commands.sweep() == (0, 5)
    status, sent = await world.call(
        "device_member", "POST", path(world, "device_member"), json=body
    )
    assert status == 200, sent


async def test_the_list_leaves_out_payloads_and_get_shows_them(
    world: World, devices: AnsweringDevices
) -> None:
    """A page of a thousand commands would carry each payload and reply (#29 F3: 60 MB);
    the list shows the reply's status, GET of the one command the whole."""
    body = {"name": "big", "payload": {"blob": "x" * 10_000}}
    status, sent = await world.call("org_admin", "POST", path(world, "device_member"), json=body)
    assert status == 200, sent
    status, listed = await world.call("org_admin", "GET", path(world, "device_member"))
    assert status == 200, listed
    (item,) = listed["commands"]
    assert "payload" not in item and item["reply"] == {"status": 200}, item
    one = path(world, "device_member", f"/{item['request_id']}")
    status, found = await world.call("org_admin", "GET", one)
    assert found["command"]["payload"] == body["payload"]
    assert found["command"]["reply"] == {"status": 200, "payload": {"ran": "big"}}
