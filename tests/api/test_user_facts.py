"""What the services keep about a user between requests (edge/accounts/user_facts.py) never
outlives a change that shows in a GET, whoever makes it: each test reads a user once (so it
is kept), changes something, and reads again with the same token (a new token opens a
session, which would clear what is kept and prove nothing).
"""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Awaitable, Callable
from typing import Any

import apsw
from aiohttp import FormData
from PIL import Image

from edge.accounts.user_facts import MAX_HELD, MAX_PICTURE
from tests.images import image_bytes
from tests.world import World

Reader = Callable[[str], Awaitable[dict[str, Any]]]


async def reader(world: World, caller: str = "org_admin") -> Reader:
    """GET /v2/users/{id} as `caller`, always with one token."""
    token = await world.token(caller)
    assert world.api is not None

    async def read(who: str) -> dict[str, Any]:
        assert world.api is not None
        status, body = await world.api.call("GET", f"/v2/users/{world.id(who)}", token)
        assert status == 200, body
        return dict(body["user"])

    return read


def elsewhere(world: World, sql: str, params: tuple[Any, ...]) -> None:
    """A write by another process (or the sqlite3 shell): not through this one's writer."""
    conn = apsw.Connection(str(world.site.services.db.path))
    try:
        conn.execute(sql, params)
    finally:
        conn.close()


async def test_a_user_read_twice_is_kept_and_answers_the_same(world: World) -> None:
    read = await reader(world)
    first = await read("member")
    assert world.site.services.users.facts.cache is not None
    assert world.id("member") in world.site.services.users.facts.cache._entries
    assert await read("member") == first


async def test_each_caller_gets_their_own_answer(world: World) -> None:
    admin, reader_ = await reader(world), await reader(world, "org_user_perms")
    for _ in range(2):
        assert {"is_active", "org_permissions", "group_ids"} <= set(await admin("member"))
        seen = set(await reader_("member"))
        assert not {"is_active", "org_permissions", "group_ids"} & seen
    status, body = await world.call("plain", "GET", f"/v2/users/{world.id('member')}")
    assert status == 404, body


async def test_a_callers_new_standing_shows_at_once(world: World) -> None:
    read = await reader(world, "org_user_perms")
    assert "is_active" not in await read("member")
    sql = "UPDATE access SET is_admin = 1 WHERE grantee_id = ? AND kind = 'org'"
    elsewhere(world, sql, (world.id("org_user_perms"),))  # moves the access epoch alone
    assert "is_active" in await read("member")


async def test_a_profile_change_shows_at_once(world: World) -> None:
    read = await reader(world)
    await read("member")
    token = await world.token("org_admin")
    assert world.api is not None
    path = f"/v2/users/{world.id('member')}"
    status, body = await world.api.call("PATCH", path, token, json={"first_name": "Ada"})
    assert status == 200, body
    assert (await read("member"))["first_name"] == "Ada"


async def test_a_new_sign_in_shows_in_last_seen(world: World) -> None:
    read = await reader(world)
    before = (await read("loner")).get("last_seen")
    await world.token("loner")  # opens a session, as signing in does
    after = (await read("loner"))["last_seen"]
    assert after != before


async def test_a_picture_shows_and_goes(world: World) -> None:
    read = await reader(world)
    assert "picture_base64" not in await read("member")
    token = await world.token("org_admin")
    assert world.api is not None
    path = f"/v2/users/{world.id('member')}/picture"
    form = FormData()
    image = io.BytesIO(image_bytes("PNG", (32, 32)))
    form.add_field("file", image, filename="me.png", content_type="image/png")
    status, body = await world.api.call("PUT", path, token, data=form)
    assert status == 200, body
    assert (await read("member"))["picture_content_type"] == "image/png"
    assert (await read("member"))["picture_content_type"] == "image/png"  # kept, picture too
    status, body = await world.api.call("DELETE", path, token)
    assert status == 200, body
    assert "picture_base64" not in await read("member")


async def test_new_holdings_show_at_once(world: World) -> None:
    read = await reader(world)
    assert (await read("loner"))["group_ids"] == []
    await world.grant("group", world.org_group_id, world.id("loner"))
    assert (await read("loner"))["group_ids"] == [world.org_group_id]


async def test_a_change_made_elsewhere_shows_at_once(world: World) -> None:
    read = await reader(world)
    user_id = world.id("member")
    await read("member")
    elsewhere(world, "UPDATE users SET nickname = 'Zed' WHERE id = ?", (user_id,))
    assert (await read("member"))["nickname"] == "Zed"
    await world.token("member")
    assert "last_seen" in await read("member")
    elsewhere(world, "DELETE FROM sessions WHERE account_id = ?", (user_id,))
    assert "last_seen" not in await read("member")


async def test_access_changed_elsewhere_shows_at_once(world: World) -> None:
    read = await reader(world)
    loner = world.id("loner")
    await world.grant("org", world.tenant.org_id, loner, user_permissions={"can_read": True})
    assert (await read("loner"))["is_org_admin"] is False
    sql = "UPDATE access SET is_admin = 1 WHERE grantee_id = ? AND kind = 'org'"
    elsewhere(world, sql, (loner,))
    assert (await read("loner"))["is_org_admin"] is True


async def test_a_large_picture_is_shown_every_time_but_not_kept(world: World) -> None:
    read = await reader(world)
    token = await world.token("org_admin")
    assert world.api is not None
    noise = Image.frombytes("RGB", (256, 256), os.urandom(256 * 256 * 3))
    data = io.BytesIO()
    noise.save(data, "PNG")
    form = FormData()
    form.add_field("file", io.BytesIO(data.getvalue()), filename="me.png", content_type="image/png")
    path = f"/v2/users/{world.id('member')}/picture"
    status, body = await world.api.call("PUT", path, token, data=form)
    assert status == 200, body
    first, second = await read("member"), await read("member")
    assert len(base64.b64decode(first["picture_base64"])) > MAX_PICTURE
    assert second == first
    facts = world.site.services.users.facts.of(world.id("member"))
    assert facts is not None and facts.shown is None and not facts.answers


async def test_a_user_who_holds_much_is_read_afresh(world: World) -> None:
    read = await reader(world)
    loner = world.id("loner")
    for _ in range(MAX_HELD + 1):
        await world.grant("group", await world.new_group(), loner)
    assert len((await read("loner"))["group_ids"]) == MAX_HELD + 1
    cache = world.site.services.users.facts.cache
    assert cache is not None and loner not in cache._entries
