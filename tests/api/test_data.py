"""The data interface over HTTP: entries, paths, index fields, history, limits.

Lists (filters, paging, the scan cap) are in test_data_lists.py, permissions in
test_data_permissions.py, bulk requests in test_data_bulk.py. The data are in Ward, the
world's org-level group (tests/world.py), and Clinic's org admin reads and writes them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.world import World

VALUE_LIMIT = 4096


# A small value limit (the setting at work), so oversized values stay small.
pytestmark = pytest.mark.world(data_max_value_bytes=VALUE_LIMIT)


async def test_put_then_get_returns_the_entry(world: World) -> None:
    who = "org_admin"
    await world.put_data(who, "sensors/t1", {"celsius": 21.5, "ok": True}, unicode_1="hall")
    status, body = await world.data(who, "GET", "sensors/t1")
    assert status == 200
    entry = body["data"]
    assert entry["path"] == "/sensors/t1"
    assert entry["value"] == {"celsius": 21.5, "ok": True}
    assert entry["unicode_1"] == "hall" and "unicode_2" not in entry
    assert entry["revision"] == 1 and entry["verified"] is False
    assert entry["created_by"] == entry["last_updated_by"] == world.tenant.admin_id
    assert entry["updated_by_list"] == [world.tenant.admin_id]
    assert entry["updated_date_list"] == [entry["created_date"]]


@pytest.mark.parametrize(
    "value", [{"a": [1, {"b": None}]}, [1, "two", 3.5], "text", 42, -0.5, True, None, {}]
)
async def test_any_json_value_comes_back_exactly(world: World, value: Any) -> None:
    who = "org_admin"
    await world.put_data(who, "v", value)
    status, body = await world.data(who, "GET", "v")
    assert (status, body["data"]["value"]) == (200, value)


@pytest.mark.parametrize("spelling", ["a/b", "/a/b", "a/b/"])
async def test_paths_get_their_leading_slash(world: World, spelling: str) -> None:
    who = "org_admin"
    await world.put_data(who, spelling, 1)
    status, body = await world.data(who, "GET", "/a/b")
    assert (status, body["data"]["path"]) == (200, "/a/b")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("a//b", "path: '/a//b' has an empty segment"),
        ("a/%01b", "path: must not hold control characters"),
        ("", "path: name an entry below '/'"),
    ],
)
async def test_invalid_paths_are_400(world: World, raw: str, message: str) -> None:
    who = "org_admin"
    url = f"/v2/groups/{world.org_group_id}/data/{raw}"
    status, body = await world.call(who, "PUT", url, json={"value": 1})
    assert (status, body) == (400, {"message": message})


async def test_a_missing_entry_is_404_and_an_empty_subtree_an_empty_list(world: World) -> None:
    who = "org_admin"
    status, body = await world.data(who, "GET", "nothing/here")
    assert (status, body) == (404, {"message": "No data at /nothing/here"})
    status, body = await world.data(who, "GET", "nothing", params={"cascade": "true"})
    assert (status, body) == (200, {"data": []})
    status, body = await world.data(
        who, "GET", "nothing", params={"cascade": "true", "paths_only": "true"}
    )
    assert (status, body) == (200, {"paths": []})


async def test_paths_only_works_without_cascade(world: World) -> None:
    who = "org_admin"
    await world.put_data(who, "one", 1)
    status, body = await world.data(who, "GET", "one", params={"paths_only": "true"})
    assert (status, body) == (200, {"paths": ["/one"]})


async def test_index_fields_coerce_booleans_and_numbers_to_text(world: World) -> None:
    who = "org_admin"
    index = {"unicode_1": True, "unicode_2": 12.5, "unicode_3": 7, "unicode_4": False}
    await world.put_data(who, "c", {}, **index, number_1=3, number_2=-1.25)
    _, body = await world.data(who, "GET", "c")
    entry = body["data"]
    assert [entry[f"unicode_{i}"] for i in range(1, 5)] == ["true", "12.5", "7", "false"]
    assert (entry["number_1"], entry["number_2"]) == (3, -1.25)


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ({"unicode_1": {"a": 1}}, "unicode_1: must be of type string or number or boolean or null"),
        ({"number_1": "5"}, "number_1: must be of type number or null"),
        ({"number_1": 2**70}, "number_1: must fit in 64 bits"),
        ({"unicode_11": "x"}, "unicode_11: is not a known field"),
    ],
)
async def test_index_fields_refuse_what_they_cannot_hold(
    world: World, index: dict[str, Any], message: str
) -> None:
    who = "org_admin"
    status, body = await world.data(who, "PUT", "x", json={"value": 1, **index})
    assert status in (400, 406) and body == {"message": message}


async def test_every_write_bumps_the_revision_and_keeps_a_bounded_history(
    world: World,
) -> None:
    who = "org_admin"
    for i in range(12):
        await world.put_data(who, "h", i)
    _, body = await world.data(who, "GET", "h")
    entry = body["data"]
    assert entry["revision"] == 12 and entry["value"] == 11
    assert len(entry["updated_by_list"]) == len(entry["updated_date_list"]) == 10  # num_history
    assert entry["updated_date_list"][-1] == entry["last_updated_date"]
    assert entry["created_date"] < entry["updated_date_list"][0]


async def test_a_put_over_an_entry_moves_it_in_the_indexes_of_fields_that_change(
    world: World,
) -> None:
    """A PUT over an entry updates only the index fields that change (storage/data.py
    `update`): the entry leaves the old values' places, and 7.0 replaces 7 as a new value."""
    who = "org_admin"
    await world.put_data(who, "i/x", 1, unicode_1="old", unicode_2="same", number_1=7)
    await world.put_data(who, "i/x", 2, unicode_2="same", unicode_3="new", number_1=7.0)
    _, body = await world.data(who, "GET", "i/x", params={"verify": "true"})
    entry = body["data"]
    assert entry["value"] == 2 and entry["verified"] is True
    assert "unicode_1" not in entry and entry["unicode_2"] == "same"
    assert entry["unicode_3"] == "new" and isinstance(entry["number_1"], float)
    for name, value, found in [
        ("unicode_1", "old", []),
        ("unicode_2", "same", ["/i/x"]),
        ("unicode_3", "new", ["/i/x"]),
        ("number_1", "7", ["/i/x"]),
    ]:
        query = {"cascade": "true", "paths_only": "true", name: value}
        _, body = await world.data(who, "GET", "i", params=query)
        assert body["paths"] == found, name


async def test_post_creates_and_refuses_to_overwrite(world: World) -> None:
    who = "org_admin"
    status, body = await world.data(who, "POST", "p", json={"value": {"a": 1}})
    assert (status, body) == (201, {"message": "Success"})
    status, body = await world.data(who, "POST", "p", json={"value": {"a": 2}})
    assert status == 409 and body["message"].startswith("path: an entry already exists at /p")
    _, body = await world.data(who, "GET", "p")
    assert body["data"]["value"] == {"a": 1}


async def test_patch_merges_objects_and_keeps_index_fields_not_sent(world: World) -> None:
    who = "org_admin"
    await world.put_data(who, "m", {"a": 1, "b": 2}, unicode_1="keep", unicode_2="drop")
    status, _ = await world.data(
        who, "PATCH", "m", json={"value": {"b": 3, "c": 4}, "unicode_2": None, "number_1": 9}
    )
    assert status == 200
    _, body = await world.data(who, "GET", "m")
    entry = body["data"]
    assert entry["value"] == {"a": 1, "b": 3, "c": 4}
    assert entry["unicode_1"] == "keep" and "unicode_2" not in entry and entry["number_1"] == 9
    assert entry["revision"] == 2
    status, _ = await world.data(who, "PATCH", "m", json={"value": "flat"})
    _, body = await world.data(who, "GET", "m")
    assert body["data"]["value"] == "flat"


async def test_patch_of_a_missing_entry_is_404(world: World) -> None:
    who = "org_admin"
    status, body = await world.data(who, "PATCH", "ghost", json={"value": {}})
    assert (status, body) == (404, {"message": "No data at /ghost"})


async def test_put_without_a_value_is_406(world: World) -> None:
    who = "org_admin"
    status, body = await world.data(who, "PUT", "x", json={"unicode_1": "a"})
    assert (status, body) == (406, {"message": "value: is required"})


async def test_delete_one_entry_then_a_subtree(world: World) -> None:
    who = "org_admin"
    for path in ("t/a", "t/a/b", "t/c", "ta", "u"):
        await world.put_data(who, path, path)
    status, body = await world.data(who, "DELETE", "t/c")
    assert (status, body) == (200, {"message": "Success"})
    assert (await world.data(who, "DELETE", "t/c"))[0] == 404
    status, _ = await world.data(who, "DELETE", "t", params={"cascade": "true"})
    assert status == 200
    _, body = await world.data(who, "GET", "", params={"cascade": "true", "paths_only": ""})
    assert body == {"paths": ["/ta", "/u"]}  # whole segments: /ta is not below /t


# -- limits (docs/data.md, "Limits") -------------------------------------------------
# What the shared body reader (edge/kernel/json_text.py) answers for the same bodies: it refuses
# them before the data rules see them. Exact data-rule messages: tests/edge/data.
READER_MESSAGES: tuple[str, ...] = (
    "body: NaN and Infinity are not valid JSON numbers",
    "value: contains an unpaired UTF-16 surrogate (not valid Unicode)",
    "value.(key): contains an unpaired UTF-16 surrogate (not valid Unicode)",
    "unicode_1: contains an unpaired UTF-16 surrogate (not valid Unicode)",
)


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"value": NaN}', "value: NaN and Infinity are not JSON numbers"),
        (b'{"value": {"x": -Infinity}}', "value: NaN and Infinity are not JSON numbers"),
        (b'{"value": "\\ud800"}', "value: holds a lone surrogate (not valid Unicode)"),
        (b'{"value": {"\\udfff": 1}}', "value: holds a lone surrogate (not valid Unicode)"),
        (
            b'{"value": 1, "unicode_1": "\\ud800"}',
            "unicode_1: holds a lone surrogate (not valid Unicode)",
        ),
        (b'{"value": 1, "number_1": NaN}', "number_1: NaN and Infinity are not JSON numbers"),
    ],
)
async def test_values_obey_the_json_rules(world: World, raw: bytes, message: str) -> None:
    """A 400 and nothing written. The message is the data rule's today; once the hardened
    body reader (#9) refuses these for every body, it may be the reader's."""
    who = "org_admin"
    headers = {"Content-Type": "application/json"}
    status, body = await world.data(who, "PUT", "bad", data=raw, headers=headers)
    assert status == 400 and set(body) == {"message"}, body
    assert body["message"] in (message, *READER_MESSAGES), body
    assert (await world.data(who, "GET", "bad"))[0] == 404  # nothing written


async def test_depth_is_bounded(world: World) -> None:
    who = "org_admin"
    await world.put_data(who, "deep", nested(64))
    status, body = await world.data(who, "PUT", "deeper", json={"value": nested(65)})
    assert (status, body) == (400, {"message": "value: is nested deeper than 64 levels"})


async def test_an_oversized_value_is_a_400_naming_it_not_a_413(world: World) -> None:
    who = "org_admin"
    limit = world.site.services.config.data_max_value_bytes
    await world.put_data(who, "big", "x" * (limit - 2))  # the quotes count
    status, body = await world.data(who, "PUT", "bigger", json={"value": "x" * (limit - 1)})
    assert status == 400
    assert body == {"message": f"value: is {limit + 1} bytes as JSON; at most {limit} are allowed"}


async def test_a_merged_value_obeys_the_size_limit_too(world: World) -> None:
    who = "org_admin"
    half = world.site.services.config.data_max_value_bytes // 2
    await world.put_data(who, "grow", {"a": "x" * half})
    status, body = await world.data(who, "PATCH", "grow", json={"value": {"b": "y" * half}})
    assert status == 400 and body["message"].startswith("value: is ")


async def test_another_orgs_group_and_an_unknown_group_are_404(world: World) -> None:
    who = "org_admin"
    status, body = await world.data(who, "GET", "x", group="abcdefghijklmnop")
    assert (status, body) == (404, {"message": "Group not found"})


async def test_a_body_nested_past_the_readers_recursion_is_a_400(world: World) -> None:
    who = "org_admin"
    raw = b'{"value": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    headers = {"Content-Type": "application/json"}
    status, _ = await world.data(who, "PUT", "deep", data=raw, headers=headers)
    assert status == 400
