"""Who may read, create, overwrite, patch and delete files: caller by caller, denials next
to grants, with `file_paths` (the longest path decides), roles, and the legacy rule."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.files import PART
from tests.world import FILE_CALLERS, World, table

pytestmark = pytest.mark.world("content", files_min_part_bytes=PART)


# Per caller, towards the files of Scans (a group in Apollo) when no file path grants it
# more: its admins may do everything (staff with the scope, the org admin and device_boss,
# an org admin; the admins of Apollo; scans_admin); who sees Scans without a grant of that
# right is refused (the file holders, scans_member, those who may read every group of the
# org or of Apollo); the rest do not see it.
NOBODY_ELSE = {
    "staff": 200,
    "staff_unscoped": 403,
    "org_admin": 200,
    "project_admin": 200,
    "role_admin": 200,
    "org_user_perms": 404,
    "org_group_role_perms": 403,
    "org_project_perms": 404,
    "org_device_perms": 404,
    "project_user_perms": 404,
    "project_group_role_perms": 403,
    "project_device_perms": 404,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": 404,  # of Ward, not of Scans
    "group_user_perms": 404,
    "group_editor": 404,
    "group_device_perms": 404,
    "member": 404,
    "holder": 404,
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "device_member": 404,
    "device_loner": 404,
    "device_boss": 200,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
    "scans_admin": 200,
    "file_reader": 403,
    "file_writer": 403,
    "file_updater": 403,
    "file_deleter": 403,
    "file_editor": 403,
    "file_scoped": 403,  # its grants are under /shared
    "file_role_holder": 403,
    "scans_member": 403,
}


def allowed(*who: str) -> list[Any]:
    """The table where the named callers' file paths grant the right too."""
    return table({**NOBODY_ELSE, **dict.fromkeys(who, 200)}, more=FILE_CALLERS)


@pytest.fixture
async def files(world: World) -> World:
    for path in ("/doc.txt", "/shared/a.txt", "/shared/secret/b.txt"):
        assert (await world.upload("file_editor", path, path.encode()))[0] == 200
    return world


@pytest.mark.parametrize(
    ("who", "expected"), allowed("file_reader", "file_editor", "file_role_holder")
)
async def test_who_may_read_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.files(who, "GET", "doc.txt")
    assert status == expected, body
    if status == 200:
        got = await files.fetch(body["url"])
        assert got[1] == b"/doc.txt"


@pytest.mark.parametrize(("who", "expected"), allowed("file_writer", "file_editor"))
async def test_who_may_create_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.upload(who, "new.txt", b"n")
    assert status == expected, body
    assert (await files.stored("new.txt") is not None) is (expected == 200)


@pytest.mark.parametrize(("who", "expected"), allowed("file_updater", "file_editor"))
async def test_who_may_overwrite_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.upload(who, "doc.txt", b"changed")
    assert status == expected, body


@pytest.mark.parametrize(("who", "expected"), allowed("file_updater", "file_editor"))
async def test_who_may_patch_a_file(files: World, who: str, expected: int) -> None:
    status, body = await files.files(who, "PATCH", "doc.txt", json={"unicode_1": "x"})
    assert status == expected, body


@pytest.mark.parametrize(("who", "expected"), allowed("file_deleter", "file_editor"))
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
        status, body = await files.upload("file_scoped", path, b"s")
    else:
        status, body = await files.files("file_scoped", method, path)
    assert status == expected, body


async def test_a_cascade_lists_only_what_may_be_read(files: World) -> None:
    params = {"cascade": "true", "paths_only": "true"}
    status, body = await files.files("file_scoped", "GET", "/", params=params)
    assert (status, body) == (200, {"paths": ["/shared/a.txt"]})
    status, body = await files.files("file_reader", "GET", "/", params=params)
    assert body == {"paths": ["/doc.txt", "/shared/a.txt", "/shared/secret/b.txt"]}
    status, body = await files.files("file_writer", "GET", "/", params=params)
    assert (status, body) == (200, {"paths": []})


async def test_a_cascade_delete_needs_delete_on_every_path_below(files: World) -> None:
    params = {"cascade": "true"}
    status, body = await files.files("file_scoped", "DELETE", "shared", params=params)
    assert (status, body["message"]) == (403, "Not permitted to delete every file under /shared")
    assert await files.stored("shared/a.txt") is not None
    assert (await files.files("file_editor", "DELETE", "shared", params=params))[0] == 200
    assert await files.stored("shared/secret/b.txt") is None


async def test_the_legacy_rule_lets_write_overwrite_and_patch(files: World) -> None:
    group = files.legacy_group_id
    assert (await files.upload("legacy_writer", "old.txt", b"1", group=group))[0] == 200
    assert (await files.upload("legacy_writer", "old.txt", b"2", group=group))[0] == 200
    patch = await files.files("legacy_writer", "PATCH", "old.txt", group, json={"unicode_1": "x"})
    assert patch[0] == 200
    assert (await files.files("legacy_writer", "DELETE", "old.txt", group))[0] == 403
    # outside the legacy rule, write alone creates but does not overwrite
    assert (await files.upload("file_writer", "w.txt", b"1"))[0] == 200
    assert (await files.upload("file_writer", "w.txt", b"2"))[0] == 403


async def test_a_group_that_requires_delete_to_put(files: World) -> None:
    group = files.strict_group_id
    status, body = await files.upload("file_editor", "s.txt", b"x", group=group)
    assert (status, body["message"]) == (403, "Not permitted to delete files at /s.txt")
    assert (await files.upload("project_admin", "s.txt", b"x", group=group))[0] == 200


async def test_a_download_url_is_useless_for_any_other_file(files: World) -> None:
    status, body = await files.files("file_reader", "GET", "doc.txt", params={"url_only": "1"})
    parts = urlsplit(body["url"])
    other = parts._replace(path=parts.path.replace("doc.txt", "shared/a.txt")).geturl()
    assert (await files.fetch(other))[0] == 403
    another_group = parts._replace(
        path=parts.path.replace(files.files_group_id, files.strict_group_id)
    )
    assert (await files.fetch(another_group.geturl()))[0] == 403


# -- completing a multipart upload: its starter alone ----------------------------------
NOT_IN_PROGRESS = {"message": "completed_upload_id: is not an upload in progress at this path"}


async def started(world: World, who: str, path: str, **body: Any) -> tuple[str, dict[str, str]]:
    """A multipart upload of one part started by `who`, its part sent: its ID and ETags."""
    status, reply = await world.files(who, "PUT", path, json={"num_parts": 1, **body})
    assert status == 200, reply
    status, etag, _ = await world.send(reply["urls"][0], path.encode())
    assert status == 200
    return reply["upload_id"], {"1": etag}


WRITERS = [p for p in allowed("file_writer", "file_editor") if p.values[1] == 200]


@pytest.mark.parametrize(("who", "expected"), WRITERS)
async def test_who_may_complete_an_upload_file_editor_started(
    world: World, who: str, expected: int
) -> None:
    """Everyone who may write the path may start an upload there, but only the account
    that started one completes it (another session of it too: each call here is one):
    staff and admins get the answer an unknown upload gets."""
    upload_id, etags = await started(world, "file_editor", "mine.bin")
    body = {"completed_upload_id": upload_id, "etag_by_part": etags}
    got = await world.files(who, "PUT", "mine.bin", json=body)
    if who == "file_editor":
        assert got == (200, {"message": "Success"})
        return
    assert got == (400, NOT_IN_PROGRESS)
    assert await world.stored("mine.bin") is None
    assert await world.files("file_editor", "PUT", "mine.bin", json=body) == (
        200,
        {"message": "Success"},
    )
    stored = await world.stored("mine.bin")
    assert stored is not None and stored["created_by"] == world.id("file_editor")


async def test_another_callers_upload_is_told_nothing_of(world: World) -> None:
    """Not its kind, not its expiry, not its parts: any ID another started is unknown, and
    a caller without the right to write gets that answer too."""
    single = await world.files("file_editor", "PUT", "one.txt", json={})
    single_id = dict(parse_qsl(urlsplit(single[1]["url"]).query))["upload_id"]
    upload_id, _ = await started(world, "file_editor", "m.bin")
    for path, body in [
        ("one.txt", {"completed_upload_id": single_id, "num_parts": 1}),
        ("m.bin", {"completed_upload_id": upload_id, "num_parts": 2}),
        ("m.bin", {"completed_upload_id": upload_id}),
    ]:
        for who in ("file_writer", "org_admin", "file_reader"):
            assert await world.files(who, "PUT", path, json=body) == (400, NOT_IN_PROGRESS)


async def test_the_starter_completes_what_another_started_at_the_same_path(world: World) -> None:
    """Two uploads in progress at one path: each completes its own, never the other's."""
    mine, my_etags = await started(world, "file_editor", "both.bin")
    theirs, their_etags = await started(world, "file_writer", "both.bin")
    theirs_body = {"completed_upload_id": theirs, "etag_by_part": their_etags}
    assert await world.files("file_editor", "PUT", "both.bin", json=theirs_body) == (
        400,
        NOT_IN_PROGRESS,
    )
    assert (await world.files("file_writer", "PUT", "both.bin", json=theirs_body))[0] == 200
    mine_body = {"completed_upload_id": mine, "etag_by_part": my_etags}
    assert (await world.files("file_editor", "PUT", "both.bin", json=mine_body))[0] == 200
    stored = await world.stored("both.bin")
    assert stored is not None and stored["last_updated_by"] == world.id("file_editor")


async def test_an_upload_with_no_starter_keeps_the_old_rule(world: World) -> None:
    """A session whose `created_by` is empty names no one: whoever may write the path
    completes it, as before the rule (the server records the starter of every upload)."""
    upload_id, etags = await started(world, "file_editor", "old.bin")
    await world.site.services.db.write(
        lambda c: c.execute("UPDATE file_uploads SET created_by = NULL WHERE id = ?", (upload_id,))
    )
    body = {"completed_upload_id": upload_id, "etag_by_part": etags}
    assert await world.files("file_reader", "PUT", "old.bin", json=body) == (
        403,
        {"message": "Not permitted to write files at /old.bin"},
    )
    assert (await world.files("file_writer", "PUT", "old.bin", json=body))[0] == 200
