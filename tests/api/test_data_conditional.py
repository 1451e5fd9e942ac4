"""Conditional data writes (an extension, docs/data.md "Conditional writes"): a single GET
answers the entry's version (its revision and which incarnation of the entry) as its ETag,
and a PUT, PATCH or DELETE with `If-Match` naming it is refused with a 409 when another
write came first, or the entry was deleted (and perhaps created again) meanwhile, so an
editor never overwrites a change it did not see."""

from __future__ import annotations

import asyncio

import pytest

from edge.data import versions
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


async def test_a_single_get_answers_the_version_as_its_etag(world: World) -> None:
    await world.put_data(WHO, "notes/a", {"n": 1})
    await world.put_data(WHO, "notes/a", {"n": 2})
    _, read = await world.data(WHO, "GET", "notes/a")
    entry = read["data"]
    made = versions.incarnation(entry["created_by"], entry["created_date"])
    assert await _etag(world, "notes/a") == f'"2-{made}"'


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


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
async def test_a_write_over_an_entry_deleted_meanwhile_is_a_409(world: World, method: str) -> None:
    """PATCH and DELETE of a missing entry are a 404 without If-Match; with it, the 409 a
    PUT gives: the entry read is gone (#35)."""
    await world.put_data(WHO, "notes/a", {"n": 1})
    etag = await _etag(world, "notes/a")
    assert (await world.data(WHO, "DELETE", "notes/a"))[0] == 200
    body = {"json": {"value": 2}} if method != "DELETE" else {}
    status, answer = await world.data(WHO, method, "notes/a", headers={"If-Match": etag}, **body)
    assert status == 409 and answer["message"] == (
        "revision: there is no entry at /notes/a now, not revision 1"
    )
    assert (await world.data(WHO, "GET", "notes/a"))[0] == 404


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
async def test_a_write_over_an_entry_created_again_meanwhile_is_a_409(
    world: World, method: str
) -> None:
    """Deleted and created again, the entry is at revision 1 again: the ETag read before
    still names another entry, so the stale write is refused, not made over the new
    entry (a lost update before #35)."""
    await world.put_data(WHO, "notes/a", {"who": "original"})
    etag = await _etag(world, "notes/a")
    assert (await world.data(WHO, "DELETE", "notes/a"))[0] == 200
    await world.put_data(WHO, "notes/a", {"who": "new"})
    body = {"json": {"value": {"who": "stale"}}} if method != "DELETE" else {}
    status, answer = await world.data(WHO, method, "notes/a", headers={"If-Match": etag}, **body)
    assert (status, answer) == (
        409,
        {"message": "revision: the entry at /notes/a was deleted and created again since"},
    )
    _, read = await world.data(WHO, "GET", "notes/a")
    assert (read["data"]["value"], read["data"]["revision"]) == ({"who": "new"}, 1)


async def test_a_delete_at_the_version_read_goes_through_and_behind_another_is_a_409(
    world: World,
) -> None:
    await world.put_data(WHO, "notes/a", {"n": 1})
    etag = await _etag(world, "notes/a")
    await world.put_data(WHO, "notes/a", {"n": "theirs"})
    status, body = await world.data(WHO, "DELETE", "notes/a", headers={"If-Match": etag})
    assert (status, body) == (409, {"message": "revision: the entry is at revision 2, not 1"})
    etag = await _etag(world, "notes/a")
    assert (await world.data(WHO, "DELETE", "notes/a", headers={"If-Match": etag}))[0] == 200
    assert (await world.data(WHO, "GET", "notes/a"))[0] == 404


async def test_if_match_with_a_cascade_delete_is_a_400(world: World) -> None:
    await world.put_data(WHO, "notes/a", 1)
    etag = await _etag(world, "notes/a")
    where = f"/v2/groups/{world.org_group_id}/data/notes/a?cascade=true"
    status, body = await world.call(WHO, "DELETE", where, headers={"If-Match": etag})
    assert status == 400 and body["message"].startswith("If-Match:")
    assert (await world.data(WHO, "GET", "notes/a"))[0] == 200


@pytest.mark.parametrize(
    "header", ["yesterday", '"-1"', '"1e3"', '"1"', '"1-0A1B2C3D"', '"' + "9" * 19 + '-0a1b2c3d"']
)
async def test_an_if_match_that_names_no_version_is_a_400(world: World, header: str) -> None:
    """A bare revision (`"1"`) is refused too: it cannot tell an entry created again from
    the one read (#35)."""
    await world.put_data(WHO, "notes/a", 1)
    status, body = await world.data(
        WHO, "PUT", "notes/a", json={"value": 2}, headers={"If-Match": header}
    )
    assert status == 400 and body["message"].startswith("If-Match: must be the entry's ETag")


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
async def test_a_weak_etag_never_matches(world: World, method: str) -> None:
    """If-Match compares strongly (RFC 9110 13.1.1): the entry's own ETag made weak is a
    400 naming the rule and writes nothing; sent strong it writes (#29)."""
    await world.put_data(WHO, "notes/a", {"n": 1})
    etag = await _etag(world, "notes/a")
    body = {"json": {"value": {"n": 2}}} if method != "DELETE" else {}
    status, answer = await world.data(
        WHO, method, "notes/a", headers={"If-Match": f"W/{etag}"}, **body
    )
    assert status == 400 and answer["message"].startswith("If-Match: must be a strong ETag")
    _, read = await world.data(WHO, "GET", "notes/a")
    assert read["data"]["revision"] == 1
    assert (await world.data(WHO, method, "notes/a", headers={"If-Match": etag}, **body))[0] == 200


async def test_the_revision_is_checked_after_the_rights(world: World) -> None:
    """A reader without the update right learns nothing from a conditional write: 403."""
    await world.put_data(WHO, "notes/a", 1)
    etag = await _etag(world, "notes/a")
    reader = await world.data_holder("reader", {"/": {"can_read": True}})
    status, _ = await world.data(
        reader, "PUT", "notes/a", json={"value": 2}, headers={"If-Match": etag}
    )
    assert status == 403


@pytest.mark.parametrize(
    ("method", "path"),
    [("PUT", "notes/a"), ("PATCH", "notes/a"), ("DELETE", "notes/a"), ("PUT", "notes/none")],
)
async def test_a_conditional_write_needs_the_read_right(
    world: World, method: str, path: str
) -> None:
    """Only a reader can hold an entry's ETag: a caller who may write but not read gets
    the 403 a GET gives, never the 409 that told the revision and whether the entry
    exists (#35); without If-Match they write as before."""
    await world.put_data(WHO, "notes/a", 1)
    etag = await _etag(world, "notes/a")
    rights = {"can_write": True, "can_update": True, "can_delete": True}
    blind = await world.data_holder("blind", {"/": rights})
    body = {"json": {"value": 2}} if method != "DELETE" else {}
    status, answer = await world.data(blind, method, path, headers={"If-Match": etag}, **body)
    assert (status, answer) == (403, {"message": f"Not permitted to read data at /{path}"})
    _, read = await world.data(WHO, "GET", "notes/a")
    assert read["data"]["revision"] == 1  # nothing written
    assert (await world.data(blind, method, path, **body))[0] == 200


async def test_without_if_match_a_write_replaces_as_before(world: World) -> None:
    await world.put_data(WHO, "notes/a", 1)
    await world.put_data(WHO, "notes/a", 2)
    _, read = await world.data(WHO, "GET", "notes/a")
    assert read["data"]["value"] == 2


async def test_of_writes_at_one_version_at_the_same_time_one_goes_through(world: World) -> None:
    await world.put_data(WHO, "race/a", 0)
    etag = await _etag(world, "race/a")
    results = await asyncio.gather(
        *(
            world.data(WHO, "PUT", "race/a", json={"value": n}, headers={"If-Match": etag})
            for n in range(8)
        )
    )
    assert sorted(status for status, _ in results) == [200] + [409] * 7
