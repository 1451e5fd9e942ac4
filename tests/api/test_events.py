"""GET /v2/events (docs/events.md): what each filter lets through, every kind of change
(data, bulk data, files, presence, twins), resuming with Last-Event-ID within the window,
past it and across a restart, a slow reader cut off, the per-account limit, a token in
the query string refused, and the 400s and 404s of opening. Who may read what is
tests/api/test_event_permissions.py's. The callers are the world's (tests/world.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from api.events import CHUNK, BatchedEvents
from edge.app import create_app, open_site
from edge.kernel.config import Config
from edge.kernel.principal import Principal
from edge.live.feed import RUN_SPAN
from tests.conftest import Api
from tests.sse import Event, Events, end_streams, open_stream, stream_of
from tests.world import World

pytestmark = pytest.mark.world("content")


def paths(events: list[Event]) -> list[tuple[str, str | None, str | None]]:
    return [(e.kind, e.data.get("path"), e.data.get("operation")) for e in events]


async def put(world: World, path: str, group: str | None = None) -> None:
    await world.put_data("org_admin", path, {"n": 1}, group)


# -- every kind, every filter --------------------------------------------------------------------
async def test_a_data_write_is_told_after_its_commit(world: World) -> None:
    events = await stream_of(world, "org_admin")
    await put(world, "/a/b")
    first = await events.next()
    assert first is not None and first.kind == "data"
    assert first.data["group_id"] == world.org_group_id
    assert (first.data["path"], first.data["operation"]) == ("/a/b", "put")
    assert first.data["org_id"] == world.tenant.org_id and "value" not in first.data
    status, _ = await world.data("org_admin", "GET", "/a/b")
    assert status == 200  # told after the commit: what it names is there to read
    events.close()


async def test_every_data_operation_is_told(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data")
    await world.data("org_admin", "POST", "/p", json={"value": 1})
    await world.data("org_admin", "PATCH", "/p", json={"value": 2})
    await world.data("org_admin", "DELETE", "/p")
    await put(world, "/tree/x")
    await world.data("org_admin", "DELETE", "/tree", params={"cascade": "true"})
    bulk = {"method": "PUT", "jobs": [{"paths": ["/b1", "/b2"], "value": 3}]}
    status, body = await world.bulk_data("org_admin", bulk)
    assert status == 200, body
    end_streams(world)
    assert paths(await events.rest()) == [
        ("data", "/p", "post"),
        ("data", "/p", "patch"),
        ("data", "/p", "delete"),
        ("data", "/tree/x", "put"),
        ("data", "/tree", "delete_below"),
        ("data", "/b1", "put"),
        ("data", "/b2", "put"),
    ]


async def test_a_refused_write_tells_nothing(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data")
    status, _ = await world.data("data_reader", "PUT", "/nope", json={"value": 1})
    assert status == 403
    end_streams(world)
    assert await events.rest() == []


async def test_the_path_prefix_covers_its_subtree_only(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data", path="/a")
    for path in ("/ab", "/a", "/a/b", "/b/a"):
        await put(world, path)
    await world.data("org_admin", "DELETE", "/", params={"cascade": "true"})
    end_streams(world)
    assert paths(await events.rest()) == [
        ("data", "/a", "put"),
        ("data", "/a/b", "put"),
        ("data", "/", "delete_below"),  # the subtree above took /a with it
    ]


async def test_group_id_chooses_one_group(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data", group_id=world.project_group_id)
    await put(world, "/in-ward")
    await put(world, "/in-lab", world.project_group_id)
    end_streams(world)
    told = await events.rest()
    assert paths(told) == [("data", "/in-lab", "put")]
    assert told[0].data["group_id"] == world.project_group_id


async def test_file_changes_are_told(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="files", group_id=world.files_group_id)
    status, body = await world.upload("org_admin", "/scans/x.bin", b"bytes")
    assert status == 200, body
    status, body = await world.files("org_admin", "PATCH", "/scans/x.bin", json={"unicode_1": "t"})
    assert status == 200, body
    status, body = await world.files("org_admin", "DELETE", "/scans/x.bin")
    assert status == 200, body
    await put(world, "/data-is-not-files")
    end_streams(world)
    assert paths(await events.rest()) == [
        ("files", "/scans/x.bin", "put"),
        ("files", "/scans/x.bin", "patch"),
        ("files", "/scans/x.bin", "delete"),
    ]


async def test_presence_and_twins_of_one_device(world: World) -> None:
    member, loner = world.id("device_member"), world.id("device_loner")
    events = await stream_of(world, "org_admin", kinds="presence,twins", device_id=member)
    presence = world.site.services.devices.presence  # as the broker reports connections
    presence.opened(loner, world.tenant.org_id)
    presence.opened(member, world.tenant.org_id)
    presence.closed(member, world.tenant.org_id, "clean")
    twin = {"desired": {"mode": "eco"}}
    status, body = await world.call("org_admin", "PATCH", f"/v2/devices/{member}/twin", json=twin)
    assert status == 200, body
    await put(world, "/not-asked-for")
    end_streams(world)
    told = await events.rest()
    assert [(e.kind, e.data["device_id"]) for e in told] == [
        ("presence", member),
        ("presence", member),
        ("twins", member),
    ]
    assert [told[0].data["online"], told[1].data["online"]] == [True, False]
    assert "reason" not in told[0].data and told[1].data["reason"] == "clean"
    assert told[2].data["version"] == body["twin"]["version"]


async def test_ids_increase(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data")
    for n in range(3):
        await put(world, f"/n{n}")
    end_streams(world)
    ids = [e.id for e in await events.rest()]
    assert len(ids) == 3 and ids == sorted(ids) and len(set(ids)) == 3


async def test_ids_do_not_count_other_organizations_changes(world: World) -> None:
    other = world.other
    admin = Principal("user", other.admin_id, None, other.org_id)
    their_group = await world.site.services.groups.create(admin, {"name": "OtherTeam"})
    events = await stream_of(world, "other_admin", kinds="data")
    await world.put_data("other_admin", "/o1", 1, group=their_group)
    first = await events.next()
    for n in range(7):
        await put(world, f"/c{n}")  # Clinic's changes, which Other may not learn of
    await world.put_data("other_admin", "/o2", 1, group=their_group)
    second = await events.next()
    events.close()
    assert first is not None and second is not None and first.id is not None
    assert second.id == first.id + 1


async def test_a_reload_id_does_not_count_other_organizations_changes(world: World) -> None:
    for n in range(5):
        await put(world, f"/r{n}")
    status, events = await open_stream(world, "other_admin", "not-an-id", kinds="data")
    assert status == 200 and isinstance(events, Events)
    end_streams(world)
    told = await events.rest()
    run_start = world.site.services.live.feed.last_id(world.other.org_id)
    assert [(e.kind, e.id) for e in told] == [("reload", run_start)]
    assert run_start % RUN_SPAN == 0  # Other has told nothing this run


# -- resuming ------------------------------------------------------------------------------------
async def test_last_event_id_resumes_with_what_was_missed(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data")
    await put(world, "/seen")
    seen = await events.next()
    assert seen is not None and seen.id is not None
    events.close()
    await put(world, "/missed1")
    await put(world, "/missed2")
    status, again = await open_stream(world, "org_admin", seen.id, kinds="data")
    assert status == 200 and isinstance(again, Events)
    await put(world, "/live")
    end_streams(world)
    told = await again.rest()
    assert [e.data["path"] for e in told] == ["/missed1", "/missed2", "/live"]
    assert told[0].id == seen.id + 1


async def test_past_the_window_the_client_reloads(world: World) -> None:
    feed = world.site.services.live.feed
    now = [1000.0]
    feed.monotonic = lambda: now[0]  # the window's clock: 301 seconds pass at once
    events = await stream_of(world, "org_admin", kinds="data")
    await put(world, "/old")
    old = await events.next()
    assert old is not None and old.id is not None
    events.close()
    await put(world, "/gone-from-the-window")
    now[0] += world.site.services.config.events_window_seconds + 1
    status, again = await open_stream(world, "org_admin", old.id, kinds="data")
    assert status == 200 and isinstance(again, Events)
    await put(world, "/after")
    end_streams(world)
    told = await again.rest()
    assert [e.kind for e in told] == ["reload", "data"]
    assert told[1].data["path"] == "/after" and told[1].id == (told[0].id or 0) + 1


@pytest.mark.parametrize("last", ["not-a-number", "99999999999999999", "0"])
async def test_an_id_the_feed_never_gave_reloads(world: World, last: str) -> None:
    status, events = await open_stream(world, "org_admin", last, kinds="data")
    assert status == 200 and isinstance(events, Events)
    end_streams(world)
    assert [e.kind for e in await events.rest()] == ["reload"]


async def test_across_a_restart_ids_keep_increasing_and_the_client_reloads(
    world: World, config: Config, aiohttp_client: Any
) -> None:
    events = await stream_of(world, "org_admin", kinds="data")
    await put(world, "/before")
    before = await events.next()
    assert before is not None and before.id is not None
    events.close()
    assert world.api is not None
    await world.api.client.close()  # the server stops; its database closes
    site = open_site(config)  # and starts again on the same folder
    try:
        restarted = world.bound(site, Api(await aiohttp_client(create_app(site))))
        status, again = await open_stream(restarted, "org_admin", before.id, kinds="data")
        assert status == 200 and isinstance(again, Events)
        await restarted.put_data("org_admin", "/after", 1)
        end_streams(restarted)
        told = await again.rest()
    finally:
        site.services.db.close()
    assert [e.kind for e in told] == ["reload", "data"]
    assert all(e.id is not None and e.id > before.id for e in told)


# -- limits --------------------------------------------------------------------------------------
@pytest.mark.world(events_stream_buffer=16)
async def test_a_reader_that_falls_behind_is_cut_off_and_resumes(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data")
    await put(world, "/first")
    first = await events.next()
    assert first is not None and first.id is not None
    # one bulk write tells 20 changes at once, more than the stream may hold unsent
    bulk = {"method": "PUT", "jobs": [{"paths": [f"/m{n}" for n in range(20)], "value": 1}]}
    status, body = await world.bulk_data("org_admin", bulk)
    assert status == 200, body
    assert await events.rest() == []  # cut off: the queue went, the stream closed
    assert world.site.services.live.streams.count() == 0
    status, again = await open_stream(world, "org_admin", first.id, kinds="data")
    assert status == 200 and isinstance(again, Events)
    end_streams(world)  # it missed more than a stream may hold: it reads again
    assert [e.kind for e in await again.rest()] == ["reload"]


@pytest.mark.world(events_stream_buffer=16)
async def test_a_resume_within_the_stream_buffer_gets_what_it_missed(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data")
    await put(world, "/first")
    first = await events.next()
    assert first is not None and first.id is not None
    events.close()
    bulk = {"method": "PUT", "jobs": [{"paths": [f"/m{n}" for n in range(16)], "value": 1}]}
    assert (await world.bulk_data("org_admin", bulk))[0] == 200
    status, again = await open_stream(world, "org_admin", first.id, kinds="data")
    assert status == 200 and isinstance(again, Events)
    end_streams(world)
    assert [e.data["path"] for e in await again.rest()] == [f"/m{n}" for n in range(16)]


async def test_a_long_replay_is_written_in_chunks(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume's missed changes go out at most CHUNK frames to a write, the loop free for
    others between writes, and all of them arrive in order."""
    writes: list[int] = []
    send_all = BatchedEvents.send_all

    async def counted(sse: BatchedEvents, frames: list[tuple[str, int | None, str]]) -> None:
        writes.append(len(frames))
        await send_all(sse, frames)

    monkeypatch.setattr(BatchedEvents, "send_all", counted)
    events = await stream_of(world, "org_admin", kinds="data")
    await put(world, "/first")
    first = await events.next()
    assert first is not None and first.id is not None
    events.close()
    missed = [f"/m{n}" for n in range(CHUNK * 2 + 5)]
    for start in range(0, len(missed), 50):  # a bulk request names at most so many paths
        bulk = {"method": "PUT", "jobs": [{"paths": missed[start : start + 50], "value": 1}]}
        assert (await world.bulk_data("org_admin", bulk))[0] == 200
    writes.clear()
    status, again = await open_stream(world, "org_admin", first.id, kinds="data")
    assert status == 200 and isinstance(again, Events)
    end_streams(world)
    assert [e.data["path"] for e in await again.rest()] == missed
    assert max(writes) == CHUNK and sum(writes) == len(missed)


@pytest.mark.world(events_stream_buffer=16)
async def test_a_resume_past_the_stream_buffer_reloads_not_replays(world: World) -> None:
    events = await stream_of(world, "org_admin", kinds="data")
    await put(world, "/first")
    first = await events.next()
    assert first is not None and first.id is not None
    events.close()
    bulk = {"method": "PUT", "jobs": [{"paths": [f"/m{n}" for n in range(17)], "value": 1}]}
    assert (await world.bulk_data("org_admin", bulk))[0] == 200
    status, again = await open_stream(world, "org_admin", first.id, kinds="data")
    assert status == 200 and isinstance(again, Events)
    await put(world, "/after")
    end_streams(world)
    told = await again.rest()
    assert [e.kind for e in told] == ["reload", "data"]
    assert told[1].data["path"] == "/after"


@pytest.mark.world(events_max_streams=2)
async def test_an_account_holds_at_most_max_streams(world: World) -> None:
    held = [await stream_of(world, "org_admin"), await stream_of(world, "org_admin")]
    status, body = await open_stream(world, "org_admin")
    assert status == 429 and set(body) == {"message"}
    assert "2 event streams" in body["message"]
    other = await stream_of(world, "group_admin")  # the limit is each account's own
    end_streams(world)
    for events in (*held, other):
        await events.rest()
    await settled(world)
    again = await stream_of(world, "org_admin")  # once closed, the slots are free again
    again.close()


async def test_the_limit_answers_retry_after(world: World) -> None:
    assert world.api is not None
    limit = world.site.services.config.events_max_streams
    held = [await stream_of(world, "data_reader") for _ in range(limit)]
    token = await world.token("data_reader")
    response = await world.api.client.get(
        "/v2/events", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status == 429 and response.headers["Retry-After"].isdigit()
    for events in held:
        events.close()


async def settled(world: World) -> None:
    """Until the server has seen every ended stream's handler return."""
    while world.site.services.live.streams.count():
        await asyncio.sleep(0.01)


# -- opening -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["access_token", "token", "api_key", "Authorization"])
async def test_a_token_in_the_query_string_is_refused(world: World, name: str) -> None:
    assert world.api is not None
    token = await world.token("org_admin")
    assert token is not None
    alone = await world.api.client.get("/v2/events", params={name: token})
    assert alone.status == 401 and set(await alone.json()) == {"message"}
    beside = await world.api.client.get(
        "/v2/events", params={name: token}, headers={"Authorization": f"Bearer {token}"}
    )
    body = await beside.json()
    assert beside.status == 400 and body["message"].startswith(f"{name}: tokens travel")
    assert world.site.services.live.streams.count() == 0


async def test_a_head_answers_the_streams_headers_and_holds_nothing(world: World) -> None:
    assert world.api is not None
    headers = {"Authorization": f"Bearer {await world.token('org_admin')}"}
    head = await world.api.client.head("/v2/events", headers=headers)
    assert head.status == 200 and head.content_type == "text/event-stream"
    assert await head.read() == b""
    assert world.site.services.live.streams.count() == 0
    query = {"group_id": "nope"}
    assert (await world.api.client.head("/v2/events", params=query, headers=headers)).status == 404


@pytest.mark.world(events_max_streams=2)
async def test_a_head_at_the_stream_limit_answers_429_as_a_get_would(world: World) -> None:
    assert world.api is not None
    held = [await stream_of(world, "data_reader") for _ in range(2)]
    headers = {"Authorization": f"Bearer {await world.token('data_reader')}"}
    head = await world.api.client.head("/v2/events", headers=headers)
    assert head.status == 429 and head.headers["Retry-After"].isdigit()
    other = await world.api.client.head(
        "/v2/events", headers={"Authorization": f"Bearer {await world.token('org_admin')}"}
    )
    assert other.status == 200  # the limit is each account's own
    for events in held:
        events.close()


@pytest.mark.parametrize(
    ("who", "query", "expected"),
    [
        ("org_admin", {"kinds": "data,mail"}, 400),
        ("org_admin", {"kinds": ","}, 400),
        ("org_admin", {"colour": "red"}, 400),
        ("org_admin", {"path": "/a//b"}, 400),
        ("org_admin", {"group_id": "nope"}, 404),
        ("org_admin", {"device_id": "nope"}, 404),
        ("plain", {"group_id": "ward"}, 404),  # a group it may not see
        ("device_plain", {"device_id": "device_member"}, 404),  # a device it may not read
        ("staff_unscoped", {}, 403),
        ("other_admin", {"group_id": "ward"}, 404),
        ("anonymous", {}, 401),
    ],
)
async def test_what_cannot_be_opened(
    world: World, who: str, query: dict[str, str], expected: int
) -> None:
    named = {"ward": world.org_group_id, "device_member": world.id("device_member")}
    query = {key: named.get(value, value) for key, value in query.items()}
    status, body = await open_stream(world, who, **query)
    assert status == expected and set(body) == {"message"}, body
    assert world.site.services.live.streams.count() == 0
