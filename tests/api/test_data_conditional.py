"""Conditional data writes (an extension, docs/data.md "Conditional writes"): a single GET
answers the entry's revision as its ETag, and a PUT or PATCH with `If-Match` naming it is
refused with a 409 naming the current revision when another write came first, so an
editor (the console's) never overwrites a change it did not see."""

from __future__ import annotations

import pytest

from tests.world import World

WHO = "org_admin"


async def _etag(world: World, path: str) -> str:
    assert world.api is not None
    response = await world.api.client.get(
        f"/v2/groups/{world.org_group_id}/data/{path}",
        headers={"Authorization": f"Bearer {await world.token(WHO)}"},
    )
    assert response.status == 200
    return response.headers["ETag"]


async def test_a_single_get_answers_the_revision_as_its_etag(world: World) -> None:
    await world.put_data(WHO, "notes/a", {"n": 1})
    await world.put_data(WHO, "notes/a", {"n": 2})
    assert await _etag(world, "notes/a") == '"2"'


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_a_write_at_the_revision_read_goes_through(world: World, method: str) -> None:
    await world.put_data(WHO, "notes/a", {"n": 1})
    etag = await _etag(world, "notes/a")
    status, body = await world.data(
        WHO, method, "notes/a", json={"value": {"n": 2}}, headers={"If-Match": etag}
    )
    assert (status, body) == (200, {"message": "Success"})
    _, read = await world.data(WHO, "GET", "notes/a")
    assert (read["data"]["value"], read["data"]["revision"]) == ({"n": 2}, 2)


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_a_write_behind_another_is_a_409_and_changes_nothing(
    world: World, method: str
) -> None:
    await world.put_data(WHO, "notes/a", {"n": 1})
    etag = await _etag(world, "notes/a")
    await world.put_data(WHO, "notes/a", {"n": "theirs"})  # someone else's write came first
    status, body = await world.data(
        WHO, method, "notes/a", json={"value": {"n": "mine"}}, headers={"If-Match": etag}
    )
    assert (status, body) == (409, {"message": "revision: the entry is at revision 2, not 1"})
    _, read = await world.data(WHO, "GET", "notes/a")
    assert (read["data"]["value"], read["data"]["revision"]) == ({"n": "theirs"}, 2)


async def test_a_put_over_an_entry_deleted_meanwhile_is_a_409(world: World) -> None:
    await world.put_data(WHO, "notes/a", {"n": 1})
    assert (await world.data(WHO, "DELETE", "notes/a"))[0] == 200
    status, body = await world.data(
        WHO, "PUT", "notes/a", json={"value": 2}, headers={"If-Match": '"1"'}
    )
    assert status == 409 and body["message"].startswith("revision: there is no entry at /notes/a")
    assert (await world.data(WHO, "GET", "notes/a"))[0] == 404


@pytest.mark.parametrize("header", ["yesterday", '"-1"', '"1e3"', '"' + "9" * 19 + '"'])
async def test_an_if_match_that_names_no_revision_is_a_400(world: World, header: str) -> None:
    await world.put_data(WHO, "notes/a", 1)
    status, body = await world.data(
        WHO, "PUT", "notes/a", json={"value": 2}, headers={"If-Match": header}
    )
    assert status == 400 and body["message"].startswith("If-Match: must be the entry's revision")


async def test_the_revision_is_checked_after_the_rights(world: World) -> None:
    """A reader without the update right learns nothing from a conditional write: 403."""
    await world.put_data(WHO, "notes/a", 1)
    reader = await world.data_holder("reader", {"/": {"can_read": True}})
    status, _ = await world.data(
        reader, "PUT", "notes/a", json={"value": 2}, headers={"If-Match": '"7"'}
    )
    assert status == 403


async def test_without_if_match_a_write_replaces_as_before(world: World) -> None:
    await world.put_data(WHO, "notes/a", 1)
    await world.put_data(WHO, "notes/a", 2)
    _, read = await world.data(WHO, "GET", "notes/a")
    assert read["data"]["value"] == 2
