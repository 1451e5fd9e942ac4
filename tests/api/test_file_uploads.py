"""Uploads: every validation error of the PUT body and of completion, and the presigned
URLs' guard (tampered, reused for another path or part, expired, wrong method, too big)."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from edge.files.signing import UrlSigner, load_key
from edge.kernel import clock
from tests.files import PART, md5, relative
from tests.world import World

MAX_UPLOAD = 64 * 1024


pytestmark = pytest.mark.world(
    "content", files_min_part_bytes=PART, files_max_upload_bytes=MAX_UPLOAD
)


def altered(url: str, **changes: str) -> str:
    """The same URL with query parameters changed (or removed, when given as '')."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    for name, value in changes.items():
        if value:
            query[name] = value
        else:
            query.pop(name, None)
    return parts._replace(query=urlencode(query)).geturl()


def moved(url: str, path: str) -> str:
    parts = urlsplit(url)
    prefix = parts.path.split("/files/")[0]
    return parts._replace(path=f"{prefix}/files/{path}").geturl()


async def multipart(world: World, path: str, parts: list[bytes]) -> tuple[str, dict[str, str]]:
    status, started = await world.files("file_editor", "PUT", path, json={"num_parts": len(parts)})
    assert status == 200, started
    etags = {}
    for number, data in enumerate(parts, 1):
        status, etag, _ = await world.send(started["urls"][number - 1], data)
        assert status == 200
        etags[str(number)] = etag
    return started["upload_id"], etags


# -- the PUT body ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"num_parts": 0}, 400, "num_parts: must be between 1 and 10000"),
        ({"num_parts": 10001}, 400, "num_parts: must be between 1 and 10000"),
        ({"num_parts": "3"}, 406, "num_parts: must be of type integer"),
        ({"expires_in": 0}, 400, "expires_in: must be between 1 and 604800 seconds"),
        ({"expires_in": 604801}, 400, "expires_in: must be between 1 and 604800 seconds"),
        ({"content_type": "text"}, 400, "content_type: must be a media type such as text/plain"),
        (
            {"content_type": "text/plain\r\nX: y"},
            400,
            "content_type: must be a media type such as text/plain",
        ),
        ({"unicode_1": "x" * 1025}, 400, "unicode_1: must be at most 1024 characters"),
        ({"number_1": "7"}, 406, "number_1: must be of type number or null"),
        ({"size": 3}, 406, "size: is not a known field"),
        (
            {"etag_by_part": {"1": "x"}},
            400,
            "etag_by_part: completes an upload: send completed_upload_id",
        ),
        (
            {"completed_upload_id": "nope", "num_parts": 1},
            400,
            "completed_upload_id: is not an upload in progress at this path",
        ),
        ({"completed_upload_id": 5}, 406, "completed_upload_id: must be of type string"),
    ],
)
async def test_put_body_errors(
    world: World, body: dict[str, Any], status: int, message: str
) -> None:
    got = await world.files("file_editor", "PUT", "v.txt", json=body)
    assert got == (status, {"message": message})


@pytest.mark.parametrize(
    ("completion", "message"),
    [
        ({}, "completed_upload_id: needs etag_by_part or num_parts to say which parts"),
        ({"etag_by_part": {}}, "etag_by_part: must map part numbers to ETags"),
        ({"etag_by_part": {"x": "a"}}, "etag_by_part.x: is not a part number"),
        ({"etag_by_part": {"0": "a"}}, "etag_by_part.0: part numbers go from 1 to 3"),
        ({"etag_by_part": {"4": "a"}}, "etag_by_part.4: part numbers go from 1 to 3"),
        (
            {"etag_by_part": {"1": "zz"}},
            "etag_by_part.1: must be the ETag the part's upload answered",
        ),
        ({"etag_by_part": {"1": 7}}, "etag_by_part.1: must be the ETag the part's upload answered"),
        (
            {"etag_by_part": {"1": "GOOD1", "3": md5(b"x")}},
            "etag_by_part.3: part 3 was not uploaded",
        ),
        (
            {"etag_by_part": {"1": md5(b"other"), "2": "GOOD2"}},
            "etag_by_part.1: does not match the ETag of part 1 as uploaded",
        ),
        (
            {"etag_by_part": {"1": "GOOD1"}, "num_parts": 2},
            "num_parts: is 2, but etag_by_part lists 1",
        ),
        ({"num_parts": 3}, "num_parts: part 3 of 3 was not uploaded"),
        ({"num_parts": 4}, "num_parts: must be between 1 and 3"),
        (
            {"etag_by_part": {"1": "GOOD1", "2": "GOOD2"}, "content_type": "x"},
            "content_type: must be a media type such as text/plain",
        ),
    ],
)
async def test_completion_errors(world: World, completion: dict[str, Any], message: str) -> None:
    parts = [os.urandom(PART), os.urandom(PART)]
    status, started = await world.files("file_editor", "PUT", "m.bin", json={"num_parts": 3})
    for number, data in enumerate(parts, 1):
        assert (await world.send(started["urls"][number - 1], data))[0] == 200
    good = {f"GOOD{n}": f'"{md5(d)}"' for n, d in enumerate(parts, 1)}
    if "etag_by_part" in completion and isinstance(completion["etag_by_part"], dict):
        completion["etag_by_part"] = {
            k: good.get(v, v) if isinstance(v, str) else v
            for k, v in completion["etag_by_part"].items()
        }
    body = {"completed_upload_id": started["upload_id"], **completion}
    assert await world.files("file_editor", "PUT", "m.bin", json=body) == (
        400,
        {"message": message},
    )
    assert await world.stored("m.bin") is None


async def test_every_part_but_the_last_needs_the_minimum_size(world: World) -> None:
    upload_id, etags = await multipart(world, "small.bin", [b"tiny", os.urandom(PART)])
    body = {"completed_upload_id": upload_id, "etag_by_part": etags}
    status, reply = await world.files("file_editor", "PUT", "small.bin", json=body)
    assert (status, reply["message"]) == (
        400,
        f"etag_by_part.1: part 1 has 4 bytes; every part but the last needs at least {PART}",
    )


async def test_an_upload_completes_once_and_only_at_its_own_path(world: World) -> None:
    upload_id, etags = await multipart(world, "mine.bin", [b"only"])
    body = {"completed_upload_id": upload_id, "etag_by_part": etags}
    not_here = (400, {"message": "completed_upload_id: is not an upload in progress at this path"})
    assert await world.files("file_editor", "PUT", "other.bin", json=body) == not_here
    assert await world.files(
        "file_editor", "PUT", "mine.bin", json=body, group=world.strict_group_id
    ) == (
        400,
        not_here[1],
    )
    assert (await world.files("file_editor", "PUT", "mine.bin", json=body))[0] == 200
    assert await world.files("file_editor", "PUT", "mine.bin", json=body) == not_here


async def test_a_single_part_upload_is_not_completed_by_put(world: World) -> None:
    status, reply = await world.files("file_editor", "PUT", "single.txt", json={})
    upload_id = dict(parse_qsl(urlsplit(reply["url"]).query))["upload_id"]
    body = {"completed_upload_id": upload_id, "num_parts": 1}
    status, reply = await world.files("file_editor", "PUT", "single.txt", json=body)
    assert (status, reply["message"]) == (
        400,
        "completed_upload_id: names a single-part upload: its own PUT completes it",
    )


async def test_an_expired_upload_cannot_be_completed(world: World) -> None:
    upload_id, etags = await multipart(world, "late.bin", [b"x"])
    clock.advance(timedelta(seconds=3601))
    body = {"completed_upload_id": upload_id, "etag_by_part": etags}
    status, reply = await world.files("file_editor", "PUT", "late.bin", json=body)
    assert (status, reply["message"]) == (
        400,
        "completed_upload_id: has expired; start the upload again",
    )


# -- the presigned URLs' guard ---------------------------------------------------------
async def upload_url(world: World, path: str = "g.txt", **body: Any) -> str:
    status, reply = await world.files("file_editor", "PUT", path, json=body)
    assert status == 200, reply
    return str(reply["url"] if "url" in reply else reply["urls"][0])


async def test_a_tampered_url_is_403(world: World) -> None:
    url = await upload_url(world)
    signature = dict(parse_qsl(urlsplit(url).query))["signature"]
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    for changed in (
        altered(url, signature=flipped),
        altered(url, signature=""),
        altered(url, expires=str(int(clock.now().timestamp()) + 99999)),
        altered(url, rights="write,update,delete"),
        altered(url, upload_id="another"),
        altered(url, extra="1"),
        moved(url, "h.txt"),
    ):
        status, _, body = await world.send(changed, b"x")
        assert status == 403, (changed, body)
    assert await world.stored("g.txt") is None and await world.stored("h.txt") is None
    assert (await world.send(url, b"x"))[0] == 200


async def test_a_part_url_serves_its_part_only(world: World) -> None:
    status, started = await world.files("file_editor", "PUT", "p.bin", json={"num_parts": 2})
    first = started["urls"][0]
    assert (await world.send(altered(first, part_number="2"), b"x"))[0] == 403
    assert (await world.send(altered(first, part_number=""), b"x"))[0] == 403


async def test_an_expired_url_is_403(world: World) -> None:
    url = await upload_url(world, expires_in=60)
    clock.advance(timedelta(seconds=61))
    status, _, body = await world.send(url, b"x")
    assert status == 403 and b"expired" in body


async def test_urls_are_bound_to_their_method(world: World) -> None:
    url = await upload_url(world)
    status, _, _ = await world.fetch(url)
    assert status == 403  # an upload URL does not download
    await world.send(url, b"x")
    status, body = await world.files("file_reader", "GET", "g.txt", params={"url_only": "1"})
    assert (await world.send(body["url"], b"y"))[0] == 403  # a download URL does not upload
    assert (await world.fetch(altered(body["url"], expires="1")))[0] == 403


async def test_a_download_url_expires(world: World) -> None:
    await world.upload("file_editor", "e.txt", b"x")
    params = {"url_only": "1", "expires_in": "30"}
    status, body = await world.files("file_reader", "GET", "e.txt", params=params)
    assert (await world.fetch(body["url"]))[0] == 200
    clock.advance(timedelta(seconds=31))
    assert (await world.fetch(body["url"]))[0] == 403
    params["expires_in"] = "0"
    status, body = await world.files("file_reader", "GET", "e.txt", params=params)
    assert (status, body["message"]) == (400, "expires_in: must be between 1 and 604800")


async def test_a_download_of_a_deleted_file_is_404(world: World) -> None:
    await world.upload("file_editor", "d.txt", b"x")
    status, body = await world.files("file_reader", "GET", "d.txt", params={"url_only": "1"})
    await world.files("file_deleter", "DELETE", "d.txt")
    assert (await world.fetch(body["url"]))[0] == 404


async def test_too_large_uploads_are_413(world: World) -> None:
    url = await upload_url(world, "big.bin")
    status, _, body = await world.send(url, b"x" * (MAX_UPLOAD + 1))
    assert status == 413 and b"at most" in body

    async def stream():  # type: ignore[no-untyped-def]
        for _ in range(MAX_UPLOAD // 1024 + 1):
            yield b"y" * 1024

    response = await world.api.client.put(relative(url), data=stream())
    assert response.status == 413  # no Content-Length: refused as the bytes arrive
    assert await world.stored("big.bin") is None
    assert list(world.site.services.blobs.tmp.iterdir()) == []


async def test_an_upload_url_issued_for_a_new_path_does_not_overwrite(world: World) -> None:
    status, reply = await world.files("file_writer", "PUT", "race.txt", json={})
    assert (await world.upload("file_editor", "race.txt", b"first"))[0] == 200
    status, _, body = await world.send(reply["url"], b"second")
    assert status == 403 and b"update" in body
    entry = await world.stored("race.txt")
    assert entry is not None and entry["etag"] == md5(b"first")


async def test_every_part_url_is_the_one_its_part_alone_would_get(world: World) -> None:
    """Part URLs are written together (the common part once); each is still exactly the URL
    signed for its part: it takes that part, and no other part's URL carries its signature."""
    status, reply = await world.files("file_editor", "PUT", "many.bin", json={"num_parts": 300})
    assert status == 200
    urls = reply["urls"]
    signer = UrlSigner(load_key(world.site.services.config.data_dir))
    base = urls[0].split("/v2/")[0]
    grant = signer.verify("PUT", world.files_group_id, "/many.bin", _query(urls[41]))
    assert grant.part_number == 42 and grant.upload_id == reply["upload_id"]
    assert urls == [signer.url(base, replace(grant, part_number=n)) for n in range(1, 301)]
    assert len({_query(u)["signature"] for u in urls}) == 300
    status, etag, _ = await world.send(urls[299], b"last part")
    assert (status, etag) == (200, f'"{md5(b"last part")}"')


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))
