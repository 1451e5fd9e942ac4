"""Tunnels over HTTP: who may open, read and close them (every caller of the world,
tests/world.py, denials beside grants), the setting `device_owners_can_tunnel` (project
over org), value rules, the tokens at rest, the mail to `sendto_user_id`, and the device
views' `open_tunnels`.

The tunnels go to device_member (home project Apollo, a member of Ward, owned by `owner`);
device_member itself calls with its own API key.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from edge.app import Site
from edge.kernel import clock
from edge.kernel.errors import Unauthenticated
from storage import outbox
from storage import tunnels as tunnel_store
from storage.records import Tunnel
from storage.rows import many
from tests.world import Notices, World, table


@pytest.fixture(autouse=True)
def notices(world: World) -> Notices:
    """The notices to devices, kept for every test here (none goes out over MQTT)."""
    return world.keep_notices()


def path(world: World, target: str = "device_member", tail: str = "") -> str:
    return f"/v2/devices/{world.id(target)}/tunnels{tail}"


# Opening a tunnel to device_member: for its admins (org admin, admins of Apollo, its home
# project, and of Ward, a group it is in; device_boss is an org admin). A caller who sees
# it without being its admin (the device-permission holders, its owner while
# `device_owners_can_tunnel` is off, the device itself) is refused; the rest do not see it.
OPEN = {
    "staff": 201,
    "staff_unscoped": 403,
    "org_admin": 201,
    "project_admin": 201,
    "role_admin": 201,
    "org_user_perms": 404,
    "org_group_role_perms": 404,
    "org_project_perms": 404,
    "org_device_perms": 403,
    "project_user_perms": 404,
    "project_group_role_perms": 404,
    "project_device_perms": 403,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": 201,
    "group_user_perms": 404,
    "group_editor": 404,
    "group_device_perms": 403,
    "member": 404,
    "holder": 404,
    "owner": 403,  # device_owners_can_tunnel is off by default
    "plain": 404,
    "gemini_user": 404,
    "device_member": 403,  # itself: a device may not open tunnels to itself
    "device_loner": 404,
    "device_boss": 201,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}
# Reading its tunnels: its admins, its owner and the device itself.
READ = {
    **{who: 200 if status == 201 else status for who, status in OPEN.items()},
    "owner": 200,
    "device_member": 200,
}
# Closing them: its admins and the device itself, not its owner.
CLOSE = {**READ, "owner": 403}


@pytest.mark.parametrize(("who", "expected"), table(OPEN))
async def test_who_may_open_a_tunnel(
    world: World, notices: Notices, who: str, expected: int
) -> None:
    status, body = await world.call(who, "POST", path(world), json={"services": ["SSH"]})
    assert status == expected, body
    if status == 201:
        tunnel = body["tunnel"]
        assert set(tunnel) == {"uuid", "timeout", "client_access_token"}
        assert tunnel["timeout"] == 60 and tunnel["client_access_token"].startswith("etc_")
        assert [n[2]["uuid"] for n in notices.sent] == [tunnel["uuid"]]
    else:
        assert set(body) == {"message"}
        assert notices.sent == []


async def test_owners_tunnel_when_the_setting_allows(world: World) -> None:
    body = {"services": ["SSH"]}
    status, _ = await world.call(
        "org_admin", "PATCH", "/v2/my-org", json={"device_owners_can_tunnel": True}
    )
    assert status == 200
    loner = path(world, "device_loner")  # an org-level device: the org's setting is its own
    assert (await world.call("owner", "POST", loner, json=body))[0] == 201
    assert (await world.call("plain", "POST", path(world), json=body))[0] == 404
    assert (await world.call("org_device_perms", "POST", path(world), json=body))[0] == 403
    assert (await world.call("device_member", "POST", path(world), json=body))[0] == 403
    # Apollo copied the org's settings when it was made (docs/projects.md): the org's change
    # does not reach it, and the project's own setting wins for the devices of the project.
    assert (await world.call("owner", "POST", path(world), json=body))[0] == 403
    apollo = f"/v2/projects/{world.project_id}"
    status, _ = await world.call(
        "org_admin", "PATCH", apollo, json={"device_owners_can_tunnel": True}
    )
    assert status == 200
    assert (await world.call("owner", "POST", path(world), json=body))[0] == 201
    status, _ = await world.call(
        "org_admin", "PATCH", apollo, json={"device_owners_can_tunnel": False}
    )
    assert status == 200
    assert (await world.call("owner", "POST", path(world), json=body))[0] == 403
    assert (await world.call("owner", "POST", loner, json=body))[0] == 201
    # A project made now copies the org's `true`: the owner tunnels to its devices.
    mercury = await world.new_project(name="Mercury")
    await world.add_device("device_mercury", project_id=mercury, owner_id=world.id("owner"))
    there = path(world, "device_mercury")
    assert (await world.call("owner", "POST", there, json=body))[0] == 201


async def test_a_project_allows_its_owners_when_its_org_does_not(world: World) -> None:
    status, _ = await world.call(
        "org_admin",
        "PATCH",
        f"/v2/projects/{world.project_id}",
        json={"device_owners_can_tunnel": True},
    )
    assert status == 200
    body = {"services": ["SSH"]}
    assert (await world.call("owner", "POST", path(world), json=body))[0] == 201
    loner = path(world, "device_loner")
    assert (await world.call("owner", "POST", loner, json=body))[0] == 403


@pytest.mark.parametrize(("who", "expected"), table(READ))
async def test_who_may_read_tunnels(world: World, who: str, expected: int) -> None:
    opened = await world.open_tunnel()
    status, body = await world.call(who, "GET", path(world))
    assert status == expected, body
    status, one = await world.call(who, "GET", path(world, tail=f"/{opened['uuid']}"))
    assert status == expected, one
    if expected == 200:
        (listed,) = body["tunnels"]
        assert listed == one["tunnel"]
        assert listed["uuid"] == opened["uuid"] and listed["timeout"] == 3600
        assert listed["opened_by"] == world.tenant.admin_id
        assert listed["services"] == ["SSH", "HTTP"]
        assert "client_access_token" not in listed
    else:
        assert set(body) == {"message"} and set(one) == {"message"}


@pytest.mark.parametrize(("who", "expected"), table(CLOSE))
async def test_who_may_close_a_tunnel(
    world: World, notices: Notices, who: str, expected: int
) -> None:
    opened = await world.open_tunnel()
    one = path(world, tail=f"/{opened['uuid']}")
    status, body = await world.call(who, "DELETE", one)
    assert status == expected, body
    status, _ = await world.call("org_admin", "GET", one)
    assert status == (404 if expected == 200 else 200)
    closed = [n for n in notices.sent if n[2]["action"] == "close"]
    assert len(closed) == (1 if expected == 200 else 0)


@pytest.mark.parametrize(("who", "expected"), table(CLOSE))
async def test_who_may_close_all_tunnels(world: World, who: str, expected: int) -> None:
    opened = await world.open_tunnel()
    status, body = await world.call(who, "DELETE", path(world))
    assert status == expected, body
    status, _ = await world.call("org_admin", "GET", path(world, tail=f"/{opened['uuid']}"))
    assert status == (404 if expected == 200 else 200)


async def test_closing_one_then_all(world: World, notices: Notices) -> None:
    ids = [(await world.open_tunnel())["uuid"] for _ in range(3)]
    first = path(world, tail=f"/{ids[0]}")
    assert (await world.call("org_admin", "DELETE", first))[0] == 200
    status, body = await world.call("org_admin", "DELETE", first)
    assert (status, body) == (404, {"message": "Tunnel not found"})
    status, body = await world.call("org_admin", "GET", path(world))
    assert [t["uuid"] for t in body["tunnels"]] == ids[1:]
    assert (await world.call("org_admin", "DELETE", path(world)))[0] == 200
    status, body = await world.call("org_admin", "GET", path(world))
    assert body == {"tunnels": []}
    assert [n[2]["action"] for n in notices.sent].count("close") == 3


async def test_an_expired_tunnel_is_gone(world: World) -> None:
    opened = await world.open_tunnel(timeout=1)
    assert opened["timeout"] == 1
    clock.advance(timedelta(seconds=61))
    status, body = await world.call("org_admin", "GET", path(world))
    assert body == {"tunnels": []}
    status, _ = await world.call("org_admin", "GET", path(world, tail=f"/{opened['uuid']}"))
    assert status == 404


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"services": []}, 400, "services: must name at least one service"),
        ({"services": ["S S H"]}, 400, None),
        ({"services": ["ssh", "SSH"]}, 400, "services: 'SSH' is named twice"),
        ({"services": ["SSH"], "timeout": 0}, 400, None),
        ({"services": ["SSH"], "timeout": 721}, 400, None),
        ({"services": ["SSH"], "timeout": "60"}, 406, None),
        ({"services": ["SSH"], "colour": "red"}, 406, None),
        ({"timeout": 5}, 406, "services: is required"),
        ({"services": ["SSH"], "sendto_user_id": "nobody0000000000"}, 400, None),
    ],
)
async def test_bad_requests(world: World, body: Any, status: int, message: str | None) -> None:
    got, reply = await world.call("org_admin", "POST", path(world), json=body)
    assert got == status, reply
    assert set(reply) == {"message"}
    if message:
        assert reply["message"] == message


async def test_the_longest_timeout_is_twelve_hours(world: World) -> None:
    opened = await world.open_tunnel(timeout=720)
    assert opened["timeout"] == 720
    status, body = await world.call("org_admin", "GET", path(world, tail=f"/{opened['uuid']}"))
    assert body["tunnel"]["timeout"] == 720 * 60


async def test_sendto_must_be_a_user_of_the_org(world: World) -> None:
    status, body = await world.call(
        "org_admin",
        "POST",
        path(world),
        json={"services": ["SSH"], "sendto_user_id": world.id("other_admin")},
    )
    assert (status, body) == (
        400,
        {"message": "sendto_user_id: does not name a user of this organization"},
    )


async def test_tokens_are_kept_only_as_hashes(world: World, notices: Notices, site: Site) -> None:
    opened = await world.open_tunnel()
    device_token = await world.destination_token(opened["uuid"])
    rows = site.services.db.read(lambda c: many(c, "SELECT * FROM tunnels"))
    (row,) = rows
    text = repr(rows)
    assert opened["client_access_token"] not in text and device_token not in text
    assert (
        row["client_token_hash"]
        == hashlib.sha256(opened["client_access_token"].encode()).hexdigest()
    )
    assert row["device_token_hash"] == hashlib.sha256(device_token.encode()).hexdigest()
    assert device_token.startswith("etd_") and len(device_token) == 47


async def test_the_device_is_told_on_its_own_topic(world: World, notices: Notices) -> None:
    opened = await world.open_tunnel()
    device_id, topic, body = notices.sent[0]
    assert device_id == world.id("device_member")
    assert topic == f"{world.tenant.org_id}/{world.project_id}/devices/{device_id}/tunnels"
    assert body["action"] == "open" and body["uuid"] == opened["uuid"]
    assert body["services"] == ["SSH", "HTTP"]
    assert body["url"].endswith(f"/v2/tunnels/{opened['uuid']}")
    assert body["token_url"] == body["url"] + "/agent/token"
    assert "destination_token" not in body and "etd_" not in json.dumps(body)  # no token


TAKERS = [  # who asks for the device end's token of a tunnel to device_member
    ("device_member", 201),  # the tunnel's device itself
    ("device_boss", 404),  # another device, even an org admin
    ("org_admin", 404),  # users never hold the device end
    ("owner", 404),
    ("anonymous", 401),
]


@pytest.mark.parametrize(("who", "expected"), TAKERS)
async def test_only_the_tunnels_device_takes_its_token(
    world: World, notices: Notices, who: str, expected: int
) -> None:
    opened = await world.open_tunnel()
    path = f"/v2/tunnels/{opened['uuid']}/agent/token"
    status, body = await world.call(who, "POST", path)
    assert status == expected, body
    if expected != 201:
        assert set(body) == {"message"}
    sql = "SELECT actor_id, target_id, details FROM audit_events WHERE action = ?"
    taken = world.site.services.db.read(lambda c: many(c, sql, ("tunnel_token_taken",)))
    device = world.id("device_member")
    details = json.dumps({"tunnel_id": opened["uuid"]})
    assert [tuple(row.values()) for row in taken] == (
        [(device, device, details)] if expected == 201 else []
    )  # the credential issued is recorded, never the token


async def test_each_token_taken_replaces_the_one_before(
    world: World, notices: Notices, site: Site
) -> None:
    """Taking again (an agent restarted) leaves one token working: the latest. A closed
    tunnel gives none."""
    opened = await world.open_tunnel()
    first = await world.destination_token(opened["uuid"])
    second = await world.destination_token(opened["uuid"])
    assert first != second
    tunnels = site.services.tunnels
    with pytest.raises(Unauthenticated):
        tunnels.authenticate(opened["uuid"], first, "device")
    assert tunnels.authenticate(opened["uuid"], second, "device").id == opened["uuid"]
    path = f"/v2/devices/{world.id('device_member')}/tunnels/{opened['uuid']}"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    status, _ = await world.call(
        "device_member", "POST", f"/v2/tunnels/{opened['uuid']}/agent/token"
    )
    assert status == 404


async def test_the_mail_carries_the_token_until_delivered(world: World, site: Site) -> None:
    opened = await world.open_tunnel(sendto_user_id=world.id("plain"))
    token = opened["client_access_token"]
    (mail,) = site.services.db.read(lambda c: outbox.by_purpose(c, "tunnel"))
    assert mail["recipient"] == world.email("plain")
    assert token in mail["body_text"] and opened["uuid"] in mail["body_text"]
    assert await site.services.outbox_worker.step() == 1
    (mail,) = site.services.db.read(lambda c: outbox.by_purpose(c, "tunnel"))
    assert mail["status"] == "sent" and token not in mail["body_text"]
    delivered = list((site.services.config.data_dir / "outbox" / "mail").iterdir())
    assert any(token in f.read_text() for f in delivered)


async def test_device_views_show_open_tunnels(world: World) -> None:
    opened = await world.open_tunnel()
    member = path(world, tail="").removesuffix("/tunnels")
    for who in ("org_admin", "owner", "device_member"):
        status, body = await world.call(who, "GET", member)
        assert [t["uuid"] for t in body["device"]["open_tunnels"]] == [opened["uuid"]], who
    status, body = await world.call("org_device_perms", "GET", member)
    assert status == 200 and body["device"]["open_tunnels"] == []
    status, body = await world.call("org_admin", "GET", "/v2/devices")
    shown = {d["id"]: d["open_tunnels"] for d in body["devices"]}
    assert [t["uuid"] for t in shown[world.id("device_member")]] == [opened["uuid"]]
    assert shown[world.id("device_loner")] == []


async def test_a_suspended_device_gets_no_tunnel(world: World) -> None:
    member = world.id("device_member")
    assert (
        await world.call("org_admin", "PATCH", f"/v2/devices/{member}", json={"is_active": False})
    )[0] == 200
    status, body = await world.call("org_admin", "POST", path(world), json={"services": ["SSH"]})
    assert status == 409, body


@pytest.mark.world(tunnel_max_open_per_device=3)
async def test_a_device_has_at_most_its_open_tunnels(world: World) -> None:
    """#29: tunnels open to a device were unbounded, and every device view carried all of
    them (1,600 made an org admin's device list 349 KB)."""
    ids = [(await world.open_tunnel("group_admin"))["uuid"] for _ in range(3)]
    for who in ("group_admin", "org_admin"):  # the bound is the device's, whoever opens
        status, body = await world.call(who, "POST", path(world), json={"services": ["SSH"]})
        assert (status, body) == (409, {"message": FULL})
    assert (await world.open_tunnel("org_admin", "device_boss"))["uuid"]  # another device
    status, body = await world.call("org_admin", "GET", "/v2/devices")
    shown = {d["id"]: d["open_tunnels"] for d in body["devices"]}
    assert [t["uuid"] for t in shown[world.id("device_member")]] == ids
    assert (await world.call("group_admin", "DELETE", path(world, tail=f"/{ids[0]}")))[0] == 200
    await world.open_tunnel("group_admin")  # a closed one made room


FULL = "The device has 3 open tunnels, the most tunnel_max_open_per_device allows: close one first"


@pytest.mark.world(tunnel_max_open_per_device=2)
async def test_views_carry_at_most_the_bound_of_open_tunnels(world: World, site: Site) -> None:
    """Where more are open (opened before the bound was set or lowered), a device's views
    and its tunnel list show its newest `tunnel_max_open_per_device`; closing all closes
    every one."""
    first = await world.open_tunnel()
    db = site.services.db
    row = db.read(lambda c: tunnel_store.get(c, world.id("device_member"), first["uuid"]))
    assert row is not None
    older = [_copy(row, n) for n in range(5)]
    for made in older:
        await db.write(lambda c, made=made: tunnel_store.create(c, made))
    newest = [older[-1].id, first["uuid"]]
    member = path(world).removesuffix("/tunnels")
    status, body = await world.call("org_admin", "GET", member)
    assert [t["uuid"] for t in body["device"]["open_tunnels"]] == newest
    status, body = await world.call("org_admin", "GET", "/v2/devices")
    shown = {d["id"]: d["open_tunnels"] for d in body["devices"]}
    assert [t["uuid"] for t in shown[world.id("device_member")]] == newest
    status, body = await world.call("org_admin", "GET", path(world))
    assert [t["uuid"] for t in body["tunnels"]] == newest
    assert (await world.call("org_admin", "DELETE", path(world)))[0] == 200
    assert db.read(lambda c: many(c, "SELECT id FROM tunnels WHERE closed_date IS NULL")) == []


def _copy(tunnel: Tunnel, n: int) -> Tunnel:
    """Another open tunnel like this one, opened `n` seconds before it."""
    opened = clock.iso(clock.parse(tunnel.opened_date) - timedelta(seconds=60 - n))
    unique = f"{n}".rjust(64, "0")
    return replace(
        tunnel,
        id=f"00000000-0000-4000-8000-{n:012d}",
        opened_date=opened,
        client_token_hash=unique,
        device_token_hash=unique[::-1] + "d",
    )
