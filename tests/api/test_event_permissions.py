"""Who hears which change on GET /v2/events (docs/events.md, "Permissions"): a data change
exactly those who may read its path, a device's change exactly those who may read the
device, file changes by `file_paths`; and rights lost while a stream is open: a revoked
session, a suspended user or device end the stream with `end`, access removed or
`data_paths` narrowed stop the changes no longer readable. The callers are the world's
(tests/world.py), with its data and file holders; Ward holds the data, Scans the files.
"""

from __future__ import annotations

import pytest

from tests.sse import Events, end_streams, open_stream, open_with, stream_of
from tests.world import CALLERS, DATA_CALLERS, World, table

pytestmark = pytest.mark.world("content")

# Who hears a data change in Ward: who may read its data (tests/api/test_data_permissions.py:
# the org's and the group's admins, data_reader); the others open a stream and hear nothing.
HEARS_DATA = {
    **dict.fromkeys(CALLERS, "silent"),
    **dict.fromkeys(DATA_CALLERS, "silent"),
    "staff": "hears",
    "org_admin": "hears",
    "group_admin": "hears",
    "device_boss": "hears",
    "data_reader": "hears",
    "staff_unscoped": 403,
    "anonymous": 401,
}


async def heard(events: Events, world: World) -> list[str]:
    end_streams(world)
    told = await events.rest()
    return [f"{e.kind} {e.data.get('path') or e.data.get('device_id')}" for e in told]


@pytest.mark.parametrize(("who", "expected"), table(HEARS_DATA, more=DATA_CALLERS))
async def test_a_data_change_is_heard_by_its_readers_alone(
    world: World, who: str, expected: str | int
) -> None:
    status, events = await open_stream(world, who, kinds="data")
    if expected in (401, 403):
        assert status == expected and set(events) == {"message"}
        return
    assert status == 200 and isinstance(events, Events)
    await world.put_data("org_admin", "/told", 1)
    assert await heard(events, world) == (["data /told"] if expected == "hears" else [])


@pytest.mark.parametrize("who", [c for c in CALLERS if c not in ("staff_unscoped", "anonymous")])
async def test_a_device_change_is_heard_by_who_may_read_the_device(world: World, who: str) -> None:
    device = world.id("device_member")
    reads, _ = await world.call(who, "GET", f"/v2/devices/{device}")
    status, events = await open_stream(world, who, kinds="presence,twins")
    assert status == 200 and isinstance(events, Events)
    world.site.services.devices.presence.opened(device, world.tenant.org_id)
    patch = {"desired": {"mode": "eco"}}
    status, body = await world.call("org_admin", "PATCH", f"/v2/devices/{device}/twin", json=patch)
    assert status == 200, body
    expected = [f"presence {device}", f"twins {device}"] if reads == 200 else []
    assert await heard(events, world) == expected


FILE_HOLDERS = {
    "file_reader": ["files /a.txt", "files /shared/b.txt"],
    "file_writer": [],
    "scans_member": [],
    "file_scoped": ["files /shared/b.txt"],  # its file_paths: /shared alone
    "org_admin": ["files /a.txt", "files /shared/b.txt"],
}


@pytest.mark.parametrize(("who", "expected"), FILE_HOLDERS.items())
async def test_a_file_change_is_heard_where_file_paths_let_it_be_read(
    world: World, who: str, expected: list[str]
) -> None:
    status, events = await open_stream(world, who, kinds="files")
    assert status == 200 and isinstance(events, Events)
    for path in ("/a.txt", "/shared/b.txt"):
        status, body = await world.upload("org_admin", path, b"x")
        assert status == 200, body
    assert await heard(events, world) == expected


# -- rights lost while the stream is open ----------------------------------------------------
async def ends(events: Events) -> None:
    """The stream's next event is `end`, then it closes."""
    told = await events.rest()
    assert [e.kind for e in told] == ["end"] and set(told[0].data) == {"message"}


async def test_a_revoked_session_ends_the_stream(world: World) -> None:
    token = await world.token("data_reader")
    status, events = await open_with(world, token, kinds="data")
    assert status == 200 and isinstance(events, Events)
    await world.put_data("org_admin", "/before", 1)
    before = await events.next()
    assert before is not None and before.data["path"] == "/before"
    assert world.api is not None
    status, body = await world.api.call("PUT", "/v2/auth/token/revoke", token)
    assert status == 200, body
    await ends(events)
    assert world.site.services.live.streams.count() == 0


async def test_a_suspended_user_loses_the_stream(world: World) -> None:
    events = await stream_of(world, "data_reader", kinds="data")
    user = f"/v2/users/{world.id('data_reader')}"
    status, body = await world.call("org_admin", "PATCH", user, json={"is_active": False})
    assert status == 200, body
    await ends(events)


async def test_a_suspended_device_loses_the_stream(world: World) -> None:
    events = await stream_of(world, "device_boss", kinds="data")
    device = f"/v2/devices/{world.id('device_boss')}"
    status, body = await world.call("org_admin", "PATCH", device, json={"is_active": False})
    assert status == 200, body
    await ends(events)


async def test_removed_access_stops_the_changes_at_once(world: World) -> None:
    events = await stream_of(world, "data_reader", kinds="data")
    await world.put_data("org_admin", "/before", 1)
    before = await events.next()
    assert before is not None and before.data["path"] == "/before"
    access = f"/v2/groups/{world.org_group_id}/access/{world.id('data_reader')}"
    status, body = await world.call("org_admin", "DELETE", access)
    assert status == 200, body
    await world.put_data("org_admin", "/after", 1)
    assert await heard(events, world) == []


async def test_narrowed_data_paths_stop_what_is_no_longer_readable(world: World) -> None:
    who = await world.data_holder("narrowed", {"/": {"can_read": True}})
    events = await stream_of(world, who, kinds="data")
    await world.put_data("org_admin", "/secret/a", 1)
    first = await events.next()
    assert first is not None and first.data["path"] == "/secret/a"
    access = f"/v2/groups/{world.org_group_id}/access/{world.id(who)}"
    narrowed = {"data_paths": {"/public": {"can_read": True}}}
    status, body = await world.call("org_admin", "PATCH", access, json=narrowed)
    assert status == 200, body
    await world.put_data("org_admin", "/secret/b", 1)
    await world.put_data("org_admin", "/public/c", 1)
    assert await heard(events, world) == ["data /public/c"]


# -- a cascade delete above what a narrowed reader may read ------------------------------------
async def test_a_cascade_above_a_narrow_readers_prefix_is_told_at_its_prefix(world: World) -> None:
    who = await world.data_holder("narrow", {"/a/b": {"can_read": True}})
    await world.put_data("org_admin", "/a/b/c", 1)
    events = await stream_of(world, who, kinds="data", path="/a/b")
    status, body = await world.data("org_admin", "DELETE", "/a", params={"cascade": "true"})
    assert status == 200, body
    end_streams(world)
    told = await events.rest()
    assert [(e.kind, e.data["path"], e.data["operation"]) for e in told] == [
        ("data", "/a/b", "delete_below")
    ]


@pytest.mark.parametrize(
    ("data_paths", "prefix"),
    [
        ({"/a/b/other": {"can_read": True}}, "/a/b"),  # may not read the stream's prefix
        ({"/a/b": {"can_read": False}}, "/a/b"),  # holds the path, not the right to read
        ({"/a/b": {"can_read": True}}, "/x"),  # the cascade is not above its prefix
    ],
)
async def test_a_cascade_is_not_told_where_the_prefix_is_not_readable(
    world: World, data_paths: dict[str, dict[str, bool]], prefix: str
) -> None:
    who = await world.data_holder("narrow", data_paths)
    await world.put_data("org_admin", "/a/b/c", 1)
    events = await stream_of(world, who, kinds="data", path=prefix)
    status, body = await world.data("org_admin", "DELETE", "/a", params={"cascade": "true"})
    assert status == 200, body
    assert await heard(events, world) == []


async def test_a_file_cascade_above_a_narrow_readers_prefix_is_told_at_its_prefix(
    world: World,
) -> None:
    user_id = await world.add_user("narrow_files")
    scans = world.files_group_id
    read = {"can_read": True}
    await world.grant("group", scans, user_id, file_paths={"/top/in": read})
    status, body = await world.upload("org_admin", "/top/in/f.bin", b"x")
    assert status == 200, body
    events = await stream_of(world, "narrow_files", kinds="files", path="/top/in")
    status, body = await world.files("org_admin", "DELETE", "/top", params={"cascade": "true"})
    assert status == 200, body
    end_streams(world)
    told = await events.rest()
    assert [(e.kind, e.data["path"], e.data["operation"]) for e in told] == [
        ("files", "/top/in", "delete_below")
    ]
