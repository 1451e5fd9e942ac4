"""Who may read, create, overwrite, patch and delete files: caller by caller, denials next
to grants, with `file_paths` (the longest path decides), roles, and the legacy rule."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.api.files_world import (  # noqa: F401 (fixtures are used by name)
    World,
    config,
    data_dir,
    files_world_template,
    table,
    world_fixture,
)

ADMINS_AND = {"staff": 200, "org_admin": 200, "project_admin": 200, "group_admin": 200}
OUTSIDERS = {"plain": 404, "other_admin": 404, "anonymous": 401}
NOBODY_ELSE = dict.fromkeys(
    ("reader", "writer", "updater", "deleter", "editor", "scoped", "role_holder", "member"), 403
)


def allowed(*who: str) -> dict[str, int]:
    return {**ADMINS_AND, **NOBODY_ELSE, **dict.fromkeys(who, 200), **OUTSIDERS}


@pytest.fixture
async def files(world: World) -> World:
    for path in ("/doc.txt", "/shared/a.txt", "/shared/secret/b.txt"):
        assert (await world.upload("editor", path, path.encode()))[0] == 200
    return world


@pytest.mark.parametrize(("who", "expected"), table(allowed("reader", "editor", "role_holder")))
async def test_who_may_read_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.files(who, "GET", "doc.txt")
    assert status == expected, body
    if status == 200:
        got = await files.fetch(body["url"])
        assert got[1] == b"/doc.txt"


@pytest.mark.parametrize(("who", "expected"), table(allowed("writer", "editor")))
async def test_who_may_create_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.upload(who, "new.txt", b"n")
    assert status == expected, body
    assert (await files.stored("new.txt") is not None) is (expected == 200)


@pytest.mark.parametrize(("who", "expected"), table(allowed("updater", "editor")))
async def test_who_may_overwrite_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.upload(who, "doc.txt", b"changed")
    assert status == expected, body


@pytest.mark.parametrize(("who", "expected"), table(allowed("updater", "editor")))
async def test_who_may_patch_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.files(who, "PATCH", "doc.txt", json={"unicode_1": "x"})
    assert status == expected, body


@pytest.mark.parametrize(("who", "expected"), table(allowed("deleter", "editor")))
async def test_who_may_delete_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.files(who, "DELETE", "doc.txt")
    assert status == expected, body
    assert (await files.stored("doc.txt") is None) is (expected == 200)


@pytest.mark.parametrize(
    ("path", "method", "expected"),
    [
        ("shared/a.txt", "GET", 200),
        ("shared/secret/b.txt", "GET", 403),  # a longer path takes away
        ("sharedx.txt", "GET", 403),  # whole segments only
        ("shared/new.txt", "UPLOAD", 200),
        ("shared/secret/new.txt", "UPLOAD", 403),
        ("shared/a.txt", "DELETE", 200),
        ("shared/secret/b.txt", "DELETE", 403),
    ],
)
async def test_the_longest_path_decides(
    files: World, path: str, method: str, expected: int
) -> None:
    if method == "UPLOAD":
        status, body = await files.upload("scoped", path, b"s")
    else:
        status, body = await files.files("scoped", method, path)
    assert status == expected, body


async def test_a_cascade_lists_only_what_may_be_read(files: World) -> None:
    params = {"cascade": "true", "paths_only": "true"}
    status, body = await files.files("scoped", "GET", "/", params=params)
    assert (status, body) == (200, {"paths": ["/shared/a.txt"]})
    status, body = await files.files("reader", "GET", "/", params=params)
    assert body == {"paths": ["/doc.txt", "/shared/a.txt", "/shared/secret/b.txt"]}
    status, body = await files.files("writer", "GET", "/", params=params)
    assert (status, body) == (200, {"paths": []})


async def test_a_cascade_delete_needs_delete_on_every_path_below(files: World) -> None:
    params = {"cascade": "true"}
    status, body = await files.files("scoped", "DELETE", "shared", params=params)
    assert (status, body["message"]) == (403, "Not permitted to delete every file under /shared")
    assert await files.stored("shared/a.txt") is not None
    assert (await files.files("editor", "DELETE", "shared", params=params))[0] == 200
    assert await files.stored("shared/secret/b.txt") is None


async def test_the_legacy_rule_lets_write_overwrite_and_patch(files: World) -> None:
    group = files.legacy_group
    assert (await files.upload("legacy_writer", "old.txt", b"1", group=group))[0] == 200
    assert (await files.upload("legacy_writer", "old.txt", b"2", group=group))[0] == 200
    patch = await files.files("legacy_writer", "PATCH", "old.txt", group, json={"unicode_1": "x"})
    assert patch[0] == 200
    assert (await files.files("legacy_writer", "DELETE", "old.txt", group))[0] == 403
    # outside the legacy rule, write alone creates but does not overwrite
    assert (await files.upload("writer", "w.txt", b"1"))[0] == 200
    assert (await files.upload("writer", "w.txt", b"2"))[0] == 403


async def test_a_group_that_requires_delete_to_put(files: World) -> None:
    group = files.strict_group
    status, body = await files.upload("editor", "s.txt", b"x", group=group)
    assert (status, body["message"]) == (403, "Not permitted to delete files at /s.txt")
    assert (await files.upload("project_admin", "s.txt", b"x", group=group))[0] == 200


async def test_a_download_url_is_useless_for_any_other_file(files: World) -> None:
    status, body = await files.files("reader", "GET", "doc.txt", params={"url_only": "1"})
    parts = urlsplit(body["url"])
    other = parts._replace(path=parts.path.replace("doc.txt", "shared/a.txt")).geturl()
    assert (await files.fetch(other))[0] == 403
    another_group = parts._replace(path=parts.path.replace(files.group, files.strict_group))
    assert (await files.fetch(another_group.geturl()))[0] == 403
