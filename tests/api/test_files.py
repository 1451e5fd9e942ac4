"""Files: single-part and multipart round trips through real HTTP (bytes and ETags checked
against what the test computes), the spec's upload table, reads of one file and of a
subtree, the 308 redirect followed by real clients, PATCH and DELETE."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import httpx
import pytest

from tests import wire
from tests.files import PART, blob_paths, md5, multipart_etag, relative
from tests.world import World

pytestmark = pytest.mark.world("content", files_min_part_bytes=PART)


async def start_multipart(world: World, path: str, parts: int, **body: Any) -> dict[str, Any]:
    status, reply = await world.files("file_editor", "PUT", path, json={"num_parts": parts, **body})
    assert status == 200, reply
    assert set(reply) == {"upload_id", "urls"} and len(reply["urls"]) == parts
    return dict(reply)


async def send_parts(world: World, urls: list[str], parts: list[bytes]) -> dict[str, str]:
    etags = {}
    for number, (url, data) in enumerate(zip(urls, parts, strict=True), 1):
        status, etag, _ = await world.send(url, data)
        assert (status, etag) == (200, f'"{md5(data)}"')
        etags[str(number)] = etag
    return etags


async def read_back(world: World, path: str) -> tuple[dict[str, Any], bytes]:
    status, body = await world.files("file_reader", "GET", path)
    assert status == 200, body
    status, data, _ = await world.fetch(body["url"])
    assert status == 200
    return body["file"], data


# -- single part -----------------------------------------------------------------------
async def test_single_part_round_trip_keeps_bytes_etag_and_fields(world: World) -> None:
    data = os.urandom(100_000)
    body = {"content_type": "application/x-scan", "unicode_1": "ward 3", "number_1": 7}
    status, reply = await world.files("file_editor", "PUT", "/scans/a.bin", json=body)
    assert status == 200 and set(reply) == {"url"}, reply
    status, etag, raw = await world.send(reply["url"], data)
    assert (status, etag, raw) == (200, f'"{md5(data)}"', b"")
    entry, got = await read_back(world, "scans/a.bin")
    assert got == data
    assert entry["etag"] == md5(data) and entry["size"] == len(data)
    assert (entry["path"], entry["filename"]) == ("/scans/a.bin", "a.bin")
    assert (entry["unicode_1"], entry["number_1"], entry["revision"]) == ("ward 3", 7, 1)
    assert entry["content_type"] == "application/x-scan"
    assert entry["created_by"] == world.id("file_editor")
    assert "unicode_2" not in entry and "number_2" not in entry  # omitted, never null


async def test_an_empty_file_has_the_md5_of_nothing(world: World) -> None:
    assert (await world.upload("file_editor", "empty.txt", b""))[0] == 200
    entry, got = await read_back(world, "empty.txt")
    assert (got, entry["etag"], entry["size"]) == (b"", "d41d8cd98f00b204e9800998ecf8427e", 0)


# No bytes, however a client says so, each with its own framing.
NO_BODY = {
    "length.txt": "Content-Length: 0\r\n\r\n",
    "unframed.txt": "\r\n",  # no length and no chunks: a request without a body
    "chunked.txt": "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",  # the last chunk only
}


async def test_every_empty_upload_is_answered_not_only_the_first(world: World) -> None:
    """aiohttp hands every request without a body the same reader, one per process, which
    tells the end of the body only once: the first empty upload of a process was stored and
    every later one was never answered (its handler looped on the event loop, where no
    timer could end it). Each is a file of no bytes, again and again."""
    for revision in (1, 2):
        for name, framing in NO_BODY.items():
            status, reply = await world.files("file_editor", "PUT", name, json={})
            assert status == 200, reply
            head = f"PUT {relative(reply['url'])} HTTP/1.1\r\nHost: edge\r\n"
            status_line = await wire.status_line(world.api, (head + framing).encode())
            assert status_line.split()[1] == b"200", (name, status_line)
            entry, got = await read_back(world, name)
            assert (got, entry["size"], entry["revision"]) == (b"", 0, revision)
            assert entry["etag"] == md5(b"")


async def test_overwriting_makes_a_new_revision_and_frees_the_old_bytes(world: World) -> None:
    assert (await world.upload("file_editor", "doc.txt", b"first"))[0] == 200
    [first] = blob_paths(world, "/doc.txt")
    assert first.exists()
    assert (await world.upload("file_editor", "doc.txt", b"second", unicode_2="x"))[0] == 200
    entry, got = await read_back(world, "doc.txt")
    assert (got, entry["revision"], entry["unicode_2"]) == (b"second", 2, "x")
    assert entry["updated_by_list"] == [world.id("file_editor")] * 2
    assert not first.exists()


async def test_a_single_part_url_uploads_once(world: World) -> None:
    status, reply = await world.files("file_editor", "PUT", "once.txt", json={})
    assert (await world.send(reply["url"], b"one"))[0] == 200
    status, _, body = await world.send(reply["url"], b"two")
    assert status == 404 and b"completed" in body
    assert (await read_back(world, "once.txt"))[1] == b"one"


# -- multipart -------------------------------------------------------------------------
async def test_multipart_completed_by_etags(world: World) -> None:
    parts = [os.urandom(2 * PART), os.urandom(PART), b"tail"]
    started = await start_multipart(world, "big.bin", 3, content_type="video/mp4")
    etags = await send_parts(world, started["urls"], parts)
    body = {"completed_upload_id": started["upload_id"], "etag_by_part": etags}
    status, reply = await world.files("file_editor", "PUT", "big.bin", json=body)
    assert (status, reply) == (200, {"message": "Success"})
    entry, got = await read_back(world, "big.bin")
    assert got == b"".join(parts)
    assert entry["etag"] == multipart_etag(parts)
    assert (entry["size"], entry["content_type"]) == (len(got), "video/mp4")
    assert not (world.site.services.blobs.uploads / started["upload_id"]).exists()
    assert [p.read_bytes() for p in blob_paths(world, "/big.bin")] == parts  # no copy made


async def test_multipart_completed_by_count_in_any_upload_order(world: World) -> None:
    parts = [os.urandom(PART), os.urandom(PART), os.urandom(10)]
    started = await start_multipart(world, "count.bin", 3)
    for number in (3, 1, 2):
        status, _, _ = await world.send(started["urls"][number - 1], parts[number - 1])
        assert status == 200
    body = {"completed_upload_id": started["upload_id"], "num_parts": 3}
    assert (await world.files("file_editor", "PUT", "count.bin", json=body))[0] == 200
    entry, got = await read_back(world, "count.bin")
    assert got == b"".join(parts) and entry["etag"] == multipart_etag(parts)


async def test_completion_wins_over_starting_when_both_are_sent(world: World) -> None:
    parts = [os.urandom(PART), b"end"]
    started = await start_multipart(world, "both.bin", 2)
    await send_parts(world, started["urls"], parts)
    body = {"completed_upload_id": started["upload_id"], "num_parts": 2, "unicode_3": "done"}
    status, reply = await world.files("file_editor", "PUT", "both.bin", json=body)
    assert (status, reply) == (200, {"message": "Success"})  # not a new upload's URLs
    entry, got = await read_back(world, "both.bin")
    assert got == b"".join(parts) and entry["unicode_3"] == "done"


async def test_a_part_uploaded_again_replaces_the_first(world: World) -> None:
    started = await start_multipart(world, "again.bin", 2)
    await world.send(started["urls"][0], os.urandom(PART))
    final = [os.urandom(PART), b"x"]
    etags = await send_parts(world, started["urls"], final)
    body = {"completed_upload_id": started["upload_id"], "etag_by_part": etags}
    assert (await world.files("file_editor", "PUT", "again.bin", json=body))[0] == 200
    assert (await read_back(world, "again.bin"))[1] == b"".join(final)


async def test_a_one_part_multipart_upload_has_an_s3_etag_ending_in_1(world: World) -> None:
    started = await start_multipart(world, "one.bin", 1)
    etags = await send_parts(world, started["urls"], [b"solo"])
    body = {"completed_upload_id": started["upload_id"], "etag_by_part": etags}
    assert (await world.files("file_editor", "PUT", "one.bin", json=body))[0] == 200
    entry, _ = await read_back(world, "one.bin")
    assert entry["etag"] == multipart_etag([b"solo"])


# -- reading ---------------------------------------------------------------------------
async def test_missing_file_is_404(world: World) -> None:
    status, body = await world.files("file_reader", "GET", "nothing/here.txt")
    assert (status, body) == (404, {"message": "File not found"})


async def test_url_only_info_only_and_paths_only(world: World) -> None:
    await world.upload("file_editor", "/r/one.txt", b"1")
    status, body = await world.files("file_reader", "GET", "r/one.txt", params={"url_only": "true"})
    assert status == 200 and set(body) == {"url"}
    status, body = await world.files("file_reader", "GET", "r/one.txt", params={"info_only": ""})
    assert status == 200 and set(body) == {"file"}
    status, body = await world.files("file_reader", "GET", "r/one.txt", params={"paths_only": "1"})
    assert (status, body) == (200, {"paths": ["/r/one.txt"]})


async def test_redirect_is_308_and_real_clients_follow_it(world: World) -> None:
    await world.upload("file_editor", "photo.jpg", b"jpeg bytes", content_type="image/jpeg")
    token = await world.token("file_reader")
    where = f"/v2/groups/{world.files_group_id}/files/photo.jpg?redirect=true"
    response = await world.api.client.get(
        where, headers={"Authorization": f"Bearer {token}"}, allow_redirects=False
    )
    assert response.status == 308 and "/v2/presigned/" in response.headers["Location"]
    # The Location's signature expires: no cache may keep the redirect (a shared one would
    # hand one reader's URL to others, and keep answering with it after it has expired).
    assert response.headers["Cache-Control"] == "no-store"
    head = await world.api.client.head(
        where, headers={"Authorization": f"Bearer {token}"}, allow_redirects=False
    )
    assert (head.status, head.headers["Cache-Control"]) == (308, "no-store")
    followed = await world.api.client.get(where, headers={"Authorization": f"Bearer {token}"})
    assert (followed.status, await followed.read()) == (200, b"jpeg bytes")
    assert followed.headers.getall("Server") == ["edge"]  # a streamed answer names it too
    assert followed.history[0].status == 308
    base = str(world.api.client.make_url("")).rstrip("/")
    async with httpx.AsyncClient(base_url=base, follow_redirects=True) as client:
        answer = await client.get(where, headers={"Authorization": f"Bearer {token}"})
    assert (answer.status_code, answer.content) == (200, b"jpeg bytes")
    assert answer.headers["content-type"] == "image/jpeg"


async def test_redirect_needs_one_file(world: World) -> None:
    params = {"cascade": "true", "redirect": "true"}
    status, body = await world.files("file_reader", "GET", "/", params=params)
    assert (status, body["message"]) == (400, "redirect: applies to one file; ask without cascade")


async def test_cascade_lists_the_subtree_in_path_order_with_urls(world: World) -> None:
    for path in ("/t/b.txt", "/t/a.txt", "/t/sub/c.txt", "/tx/no.txt", "/t.txt"):
        await world.upload("file_editor", path, path.encode())
    status, body = await world.files("file_reader", "GET", "t", params={"cascade": "true"})
    assert status == 200, body
    assert [f["path"] for f in body["files"]] == ["/t/a.txt", "/t/b.txt", "/t/sub/c.txt"]
    assert len(body["urls"]) == 3 and "last_evaluated_key" not in body
    status, got, _ = await world.fetch(body["urls"][2])
    assert got == b"/t/sub/c.txt"
    params = {"cascade": "true", "paths_only": "true"}
    status, body = await world.files("file_reader", "GET", "/", params=params)
    assert body == {"paths": ["/t.txt", "/t/a.txt", "/t/b.txt", "/t/sub/c.txt", "/tx/no.txt"]}
    params = {"cascade": "true", "url_only": "true"}
    status, body = await world.files("file_reader", "GET", "t/sub", params=params)
    assert set(body) == {"urls"} and len(body["urls"]) == 1


async def test_cascade_pages_continue_with_the_key(world: World) -> None:
    for n in range(5):
        await world.upload("file_editor", f"/p/{n}.txt", b"x")
    seen, key = [], None
    while True:
        params = {"cascade": "true", "paths_only": "true", "limit": "2"}
        if key is not None:
            params["last_evaluated_key"] = key
        status, body = await world.files("file_reader", "GET", "p", params=params)
        assert status == 200, body
        seen += body["paths"]
        if "last_evaluated_key" not in body:
            break
        key = json.dumps(body["last_evaluated_key"])
    assert seen == [f"/p/{n}.txt" for n in range(5)]
    params = {"cascade": "true", "object_count": "true"}
    assert (await world.files("file_reader", "GET", "p", params=params))[1] == {"object_count": 5}


async def test_filters_on_index_fields_size_name_etag_and_dates(world: World) -> None:
    await world.upload("file_editor", "/f/a.txt", b"aaaa", unicode_1="alpha", number_1=1)
    await world.upload("file_editor", "/f/b.csv", b"bb", unicode_1="beta", number_1=5)
    await world.upload("file_editor", "/f/c.txt", b"c", unicode_1="gamma", number_1=9)

    async def paths(**query: str) -> list[str]:
        params = {"cascade": "true", "paths_only": "true", **query}
        status, body = await world.files("file_reader", "GET", "f", params=params)
        assert status == 200, body
        return list(body["paths"])

    assert await paths(unicode_1="beta") == ["/f/b.csv"]
    assert await paths(**{"unicode_1.sw": "g"}) == ["/f/c.txt"]
    assert await paths(**{"unicode_1.gte": "b", "unicode_1.lte": "c"}) == ["/f/b.csv"]
    assert await paths(**{"number_1.gt": "1", "number_1.lt": "9"}) == ["/f/b.csv"]
    assert await paths(**{"size.gte": "2"}) == ["/f/a.txt", "/f/b.csv"]
    assert await paths(**{"filename.contains": ".csv"}) == ["/f/b.csv"]
    assert await paths(etag=md5(b"c")) == ["/f/c.txt"]
    assert await paths(**{"uploaded_date.gte": "2000-01-01"}) == [
        "/f/a.txt",
        "/f/b.csv",
        "/f/c.txt",
    ]
    assert await paths(created_by=world.id("file_editor")) == ["/f/a.txt", "/f/b.csv", "/f/c.txt"]
    status, body = await world.files(
        "file_reader", "GET", "f", params={"cascade": "1", "bogus": "1"}
    )
    assert (status, body["message"]) == (400, "bogus: is not a query parameter of this list")


async def test_path_filter_scans_at_most_the_cap_then_resumes(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from edge.files import entries

    monkeypatch.setattr(entries, "SCAN_CAP", 3)
    for name in ("a1", "b1", "b2", "c1", "d1", "d2", "e1"):
        await world.upload("file_editor", f"/s/{name}", b"x")
    found, key, pages = [], None, 0
    while True:
        params = {"cascade": "true", "paths_only": "true", "path_filter": r"/[bd]\d$"}
        if key is not None:
            params["last_evaluated_key"] = key
        status, body = await world.files("file_reader", "GET", "s", params=params)
        assert status == 200, body
        found += body["paths"]
        pages += 1
        if "last_evaluated_key" not in body:
            break
        key = json.dumps(body["last_evaluated_key"])
    assert found == ["/s/b1", "/s/b2", "/s/d1", "/s/d2"]
    assert pages == 3  # a1 b1 b2 | c1 d1 d2 | e1: three windows of at most three files
    status, body = await world.files(
        "file_reader", "GET", "s", params={"cascade": "1", "path_filter": "("}
    )
    assert status == 400 and body["message"].startswith("path_filter: is not a valid")
    (
        status,
        body,
    ) = await world.files(  # compiling it would take all memory (edge/kernel/patterns.py)
        "file_reader", "GET", "s", params={"cascade": "1", "path_filter": "a{1000000000}"}
    )
    assert status == 400 and body["message"].startswith("path_filter: repeats too much")


# -- patch and delete ------------------------------------------------------------------
async def test_patch_changes_index_fields_and_refuses_server_owned_ones(world: World) -> None:
    await world.upload("file_editor", "p.txt", b"p", unicode_1="old", number_2=2)
    body = {"unicode_1": "new", "number_2": None, "unicode_6": True}
    assert (await world.files("file_editor", "PATCH", "p.txt", json=body)) == (
        200,
        {"message": "Success"},
    )
    entry = await world.stored("p.txt")
    assert entry is not None
    assert (entry["unicode_1"], entry["unicode_6"], entry["revision"]) == ("new", "true", 2)
    assert "number_2" not in entry
    for name, value in (("size", 1), ("etag", "x"), ("uploaded_date", "2026-01-01")):
        status, reply = await world.files("file_editor", "PATCH", "p.txt", json={name: value})
        assert (status, reply["message"]) == (
            400,
            f"{name}: is set by the server from the uploaded bytes",
        )
    status, reply = await world.files("file_editor", "PATCH", "p.txt", json={"content": "x"})
    assert (status, reply["message"]) == (406, "content: is not a known field")
    assert (await world.files("file_editor", "PATCH", "nope.txt", json={}))[0] == 404


async def test_delete_removes_entry_and_bytes(world: World) -> None:
    await world.upload("file_editor", "gone.txt", b"bye")
    [blob] = blob_paths(world, "/gone.txt")
    assert (await world.files("file_deleter", "DELETE", "gone.txt")) == (
        200,
        {"message": "Success"},
    )
    assert await world.stored("gone.txt") is None
    assert not blob.exists()
    assert (await world.files("file_deleter", "DELETE", "gone.txt"))[0] == 404


async def test_cascade_delete_takes_the_subtree_only(world: World) -> None:
    for path in ("/d/a", "/d/b/c", "/dd/keep"):
        await world.upload("file_editor", path, b"x")
    params = {"cascade": "true"}
    assert (await world.files("file_deleter", "DELETE", "d", params=params))[0] == 200
    status, body = await world.files(
        "file_reader", "GET", "/", params={**params, "paths_only": "1"}
    )
    assert body == {"paths": ["/dd/keep"]}


async def test_paths_are_normalized(world: World) -> None:
    assert (await world.upload("file_editor", "//x//y/", b"n"))[0] == 200
    assert (await world.stored("/x/y")) is not None
    status, body = await world.files("file_editor", "PUT", "/", json={})
    assert (status, body["message"]) == (400, "path: must name a file, not the root")


async def test_urls_point_at_the_server_reached_or_at_the_public_url(world: World) -> None:
    status, reply = await world.files("file_editor", "PUT", "pub.txt", json={})
    assert reply["url"].startswith(str(world.api.client.make_url("/v2/presigned/")))
    assert relative(reply["url"]).startswith(
        f"/v2/presigned/groups/{world.files_group_id}/files/pub.txt?"
    )
    services = world.site.services
    services.config = dataclasses.replace(services.config, public_url="https://edge.example")
    status, reply = await world.files("file_editor", "PUT", "pub.txt", json={})
    assert reply["url"].startswith("https://edge.example/v2/presigned/groups/")
