"""Tunnels over HTTP: who may open, read and close them (denials beside grants), the
setting `device_owners_can_tunnel` (project over org), value rules, the tokens at rest,
the mail to `sendto_user_id`, and the device views' `open_tunnels`."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import pytest

from edge import clock
from edge.app import Site
from storage import outbox
from storage.rows import many
from tests.api.tunnel_world import TunnelWorld, build
from tests.conftest import Api


@pytest.fixture
async def world(site: Site, api: Api, client: Any) -> TunnelWorld:
    return await build(site, api)


def path(world: TunnelWorld, target: str = "member", tail: str = "") -> str:
    return f"/v2/devices/{world.devices.devices[target]}/tunnels{tail}"


OPEN_MEMBER = {
    "staff": 201,
    "staff_unscoped": 403,
    "anonymous": 401,
    "other_admin": 404,
    "org_admin": 201,
    "project_admin": 201,
    "group_admin": 201,
    "org_block": 403,
    "project_block": 403,
    "group_block": 403,
    "owner": 403,  # device_owners_can_tunnel is off by default
    "plain": 404,
    "itself": 403,
    "other_device": 404,
}


@pytest.mark.parametrize("who", OPEN_MEMBER)
async def test_who_may_open_a_tunnel(world: TunnelWorld, who: str) -> None:
    status, body = await world.devices.as_(
        who, "member", "POST", path(world), json={"services": ["SSH"]}
    )
    assert status == OPEN_MEMBER[who], body
    if status == 201:
        tunnel = body["tunnel"]
        assert set(tunnel) == {"uuid", "timeout", "client_access_token"}
        assert tunnel["timeout"] == 60 and tunnel["client_access_token"].startswith("etc_")
    else:
        assert set(body) == {"message"}


async def test_owners_tunnel_when_the_setting_allows(world: TunnelWorld) -> None:
    dw = world.devices
    body = {"services": ["SSH"]}
    status, _ = await dw.call(
        "org_admin", "PATCH", "/v2/my-org", json={"device_owners_can_tunnel": True}
    )
    assert status == 200
    assert (await dw.as_("owner", "loner", "POST", path(world, "loner"), json=body))[0] == 201
    assert (await dw.as_("owner", "member", "POST", path(world), json=body))[0] == 201
    assert (await dw.as_("plain", "member", "POST", path(world), json=body))[0] == 404
    assert (await dw.as_("org_block", "member", "POST", path(world), json=body))[0] == 403
    # The project's own setting wins over its org's, for the devices of the project.
    status, _ = await dw.call(
        "org_admin",
        "PATCH",
        f"/v2/projects/{dw.project_id}",
        json={"device_owners_can_tunnel": False},
    )
    assert status == 200
    assert (await dw.as_("owner", "member", "POST", path(world), json=body))[0] == 403
    assert (await dw.as_("owner", "loner", "POST", path(world, "loner"), json=body))[0] == 201


async def test_a_project_allows_its_owners_when_its_org_does_not(world: TunnelWorld) -> None:
    dw = world.devices
    status, _ = await dw.call(
        "org_admin",
        "PATCH",
        f"/v2/projects/{dw.project_id}",
        json={"device_owners_can_tunnel": True},
    )
    assert status == 200
    body = {"services": ["SSH"]}
    assert (await dw.as_("owner", "member", "POST", path(world), json=body))[0] == 201
    assert (await dw.as_("owner", "loner", "POST", path(world, "loner"), json=body))[0] == 403


READ_MEMBER = {
    "org_admin": 200,
    "project_admin": 200,
    "owner": 200,
    "itself": 200,
    "org_block": 403,
    "plain": 404,
    "other_device": 404,
    "other_admin": 404,
    "anonymous": 401,
}


@pytest.mark.parametrize("who", READ_MEMBER)
async def test_who_may_read_tunnels(world: TunnelWorld, who: str) -> None:
    opened = await world.open()
    expected = READ_MEMBER[who]
    status, body = await world.devices.as_(who, "member", "GET", path(world))
    assert status == expected, body
    status, one = await world.devices.as_(
        who, "member", "GET", path(world, tail=f"/{opened['uuid']}")
    )
    assert status == expected, one
    if expected == 200:
        (listed,) = body["tunnels"]
        assert listed == one["tunnel"]
        assert listed["uuid"] == opened["uuid"] and listed["timeout"] == 3600
        assert listed["opened_by"] == world.devices.tenant.admin_id
        assert listed["services"] == ["SSH", "HTTP"]
        assert "client_access_token" not in listed


CLOSE_MEMBER = {
    "org_admin": 200,
    "group_admin": 200,
    "itself": 200,
    "owner": 403,
    "org_block": 403,
    "plain": 404,
    "other_admin": 404,
}


@pytest.mark.parametrize("who", CLOSE_MEMBER)
async def test_who_may_close_a_tunnel(world: TunnelWorld, who: str) -> None:
    opened = await world.open()
    one = path(world, tail=f"/{opened['uuid']}")
    status, body = await world.devices.as_(who, "member", "DELETE", one)
    assert status == CLOSE_MEMBER[who], body
    status, _ = await world.devices.as_("org_admin", "member", "GET", one)
    assert status == (404 if CLOSE_MEMBER[who] == 200 else 200)


async def test_closing_one_then_all(world: TunnelWorld) -> None:
    ids = [(await world.open())["uuid"] for _ in range(3)]
    dw = world.devices
    assert (await dw.as_("org_admin", "member", "DELETE", path(world, tail=f"/{ids[0]}")))[0] == 200
    status, body = await dw.as_("org_admin", "member", "DELETE", path(world, tail=f"/{ids[0]}"))
    assert (status, body) == (404, {"message": "Tunnel not found"})
    status, body = await dw.as_("org_admin", "member", "GET", path(world))
    assert [t["uuid"] for t in body["tunnels"]] == ids[1:]
    assert (await dw.as_("org_admin", "member", "DELETE", path(world)))[0] == 200
    status, body = await dw.as_("org_admin", "member", "GET", path(world))
    assert body == {"tunnels": []}
    assert [n[2]["action"] for n in world.notices.sent].count("close") == 3


async def test_an_expired_tunnel_is_gone(world: TunnelWorld) -> None:
    opened = await world.open(timeout=1)
    assert opened["timeout"] == 1
    clock.advance(timedelta(seconds=61))
    dw = world.devices
    status, body = await dw.as_("org_admin", "member", "GET", path(world))
    assert body == {"tunnels": []}
    status, _ = await dw.as_("org_admin", "member", "GET", path(world, tail=f"/{opened['uuid']}"))
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
async def test_bad_requests(
    world: TunnelWorld, body: Any, status: int, message: str | None
) -> None:
    got, reply = await world.devices.as_("org_admin", "member", "POST", path(world), json=body)
    assert got == status, reply
    assert set(reply) == {"message"}
    if message:
        assert reply["message"] == message


async def test_the_longest_timeout_is_twelve_hours(world: TunnelWorld) -> None:
    opened = await world.open(timeout=720)
    assert opened["timeout"] == 720
    status, body = await world.devices.as_(
        "org_admin", "member", "GET", path(world, tail=f"/{opened['uuid']}")
    )
    assert body["tunnel"]["timeout"] == 720 * 60


async def test_sendto_must_be_a_user_of_the_org(world: TunnelWorld) -> None:
    other_admin = world.devices.other.admin_id
    status, body = await world.devices.as_(
        "org_admin",
        "member",
        "POST",
        path(world),
        json={"services": ["SSH"], "sendto_user_id": other_admin},
    )
    assert (status, body) == (
        400,
        {"message": "sendto_user_id: does not name a user of this organization"},
    )


async def test_tokens_are_kept_only_as_hashes(world: TunnelWorld, site: Site) -> None:
    opened = await world.open()
    device_token = world.notices.token_of(opened["uuid"])
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


async def test_the_device_is_told_on_its_own_topic(world: TunnelWorld) -> None:
    opened = await world.open()
    dw = world.devices
    device_id, topic, body = world.notices.sent[0]
    assert device_id == dw.devices["member"]
    assert topic == f"{dw.tenant.org_id}/{dw.project_id}/devices/{device_id}/tunnels"
    assert body["action"] == "open" and body["uuid"] == opened["uuid"]
    assert body["services"] == ["SSH", "HTTP"]
    assert body["url"].endswith(f"/v2/tunnels/{opened['uuid']}")


async def test_the_mail_carries_the_token_until_delivered(world: TunnelWorld, site: Site) -> None:
    dw = world.devices
    opened = await world.open(sendto_user_id=dw.id("plain"))
    token = opened["client_access_token"]
    (mail,) = site.services.db.read(lambda c: outbox.by_purpose(c, "tunnel"))
    assert mail["recipient"] == dw.email("plain")
    assert token in mail["body_text"] and opened["uuid"] in mail["body_text"]
    assert await site.services.outbox_worker.step() == 1
    (mail,) = site.services.db.read(lambda c: outbox.by_purpose(c, "tunnel"))
    assert mail["status"] == "sent" and token not in mail["body_text"]
    delivered = list((site.services.config.data_dir / "outbox" / "mail").iterdir())
    assert any(token in f.read_text() for f in delivered)


async def test_device_views_show_open_tunnels(world: TunnelWorld) -> None:
    opened = await world.open()
    dw = world.devices
    member = dw.devices["member"]
    for who in ("org_admin", "owner", "itself"):
        status, body = await dw.as_(who, "member", "GET", f"/v2/devices/{member}")
        assert [t["uuid"] for t in body["device"]["open_tunnels"]] == [opened["uuid"]], who
    status, body = await dw.as_("org_block", "member", "GET", f"/v2/devices/{member}")
    assert status == 200 and body["device"]["open_tunnels"] == []
    status, body = await dw.as_("org_admin", "member", "GET", "/v2/devices")
    shown = {d["id"]: d["open_tunnels"] for d in body["devices"]}
    assert [t["uuid"] for t in shown[member]] == [opened["uuid"]]
    assert shown[dw.devices["loner"]] == []


async def test_a_suspended_device_gets_no_tunnel(world: TunnelWorld) -> None:
    dw = world.devices
    member = dw.devices["member"]
    assert (
        await dw.call("org_admin", "PATCH", f"/v2/devices/{member}", json={"is_active": False})
    )[0] == 200
    status, body = await dw.as_(
        "org_admin", "member", "POST", path(world), json={"services": ["SSH"]}
    )
    assert status == 409, body
