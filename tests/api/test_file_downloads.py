"""Downloads through presigned URLs: byte ranges (resume, 206, 416) and conditional
requests decided on the S3 ETag, with Content-Type and Content-Length right."""

from __future__ import annotations

import json
import os
from email.utils import format_datetime
from typing import Any

import pytest

from edge.kernel import clock
from tests.files import PART, md5, multipart_etag, relative
from tests.world import World

pytestmark = pytest.mark.world("content", files_min_part_bytes=PART)


DATA = os.urandom(10_000)


@pytest.fixture
async def url(world: World) -> str:
    assert (await world.upload("file_editor", "r.bin", DATA, content_type="application/pdf"))[
        0
    ] == 200
    status, body = await world.files("file_reader", "GET", "r.bin", params={"url_only": "1"})
    assert status == 200
    return str(body["url"])


async def test_whole_file_headers(world: World, url: str) -> None:
    status, got, headers = await world.fetch(url)
    assert (status, got) == (200, DATA)
    assert headers["Content-Length"] == str(len(DATA))
    assert headers["Content-Type"] == "application/pdf"
    assert headers["ETag"] == f'"{md5(DATA)}"'
    assert headers["Accept-Ranges"] == "bytes"
    assert "Last-Modified" in headers


async def test_head_on_a_download_url_gives_the_headers_without_the_bytes(
    world: World, url: str
) -> None:
    response = await world.api.client.head(relative(url))
    assert response.status == 200 and await response.read() == b""
    assert response.headers["Content-Length"] == str(len(DATA))
    assert response.headers["ETag"] == f'"{md5(DATA)}"'
    ranged = await world.api.client.head(relative(url), headers={"Range": "bytes=0-99"})
    assert ranged.status == 206 and ranged.headers["Content-Length"] == "100"
    tampered = await world.api.client.head(relative(url.replace("signature=", "signature=0")))
    assert tampered.status == 403


@pytest.mark.parametrize(
    ("header", "start", "end"),
    [
        ("bytes=0-99", 0, 100),
        ("bytes=9990-", 9990, 10_000),
        ("bytes=-10", 9990, 10_000),
        ("bytes=9990-20000", 9990, 10_000),
        ("bytes=5-5", 5, 6),
    ],
)
async def test_a_range_is_206_with_its_bytes(
    world: World, url: str, header: str, start: int, end: int
) -> None:
    status, got, headers = await world.fetch(url, Range=header)
    assert (status, got) == (206, DATA[start:end])
    assert headers["Content-Range"] == f"bytes {start}-{end - 1}/{len(DATA)}"
    assert headers["Content-Length"] == str(end - start)
    assert headers["ETag"] == f'"{md5(DATA)}"'


async def test_resuming_a_download_gives_the_whole_file(world: World, url: str) -> None:
    status, head, _ = await world.fetch(url, Range="bytes=0-4095")
    status, rest, _ = await world.fetch(url, Range="bytes=4096-", **{"If-Range": f'"{md5(DATA)}"'})
    assert status == 206 and head + rest == DATA


@pytest.mark.parametrize("header", ["bytes=10000-", "bytes=20000-20010", "bytes=abc"])
async def test_an_unsatisfiable_range_is_416(world: World, url: str, header: str) -> None:
    status, got, headers = await world.fetch(url, Range=header)
    assert status == 416
    assert headers["Content-Range"] == f"bytes */{len(DATA)}"
    assert b"message" in got


async def test_several_ranges_get_the_whole_file(world: World, url: str) -> None:
    status, got, _ = await world.fetch(url, Range="bytes=0-1,5-6")
    assert (status, got) == (200, DATA)


async def test_if_range_with_another_etag_gets_the_whole_file(world: World, url: str) -> None:
    status, got, _ = await world.fetch(url, Range="bytes=0-9", **{"If-Range": '"other"'})
    assert (status, got) == (200, DATA)
    moment = format_datetime(clock.now().replace(year=2000), usegmt=True)
    status, got, _ = await world.fetch(url, Range="bytes=0-9", **{"If-Range": moment})
    assert (status, got) == (200, DATA)  # changed since that date


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"If-None-Match": "ETAG"}, 304),
        ({"If-None-Match": "W/ETAG"}, 304),
        ({"If-None-Match": '"other", ETAG'}, 304),
        ({"If-None-Match": "*"}, 304),
        ({"If-None-Match": '"other"'}, 200),
        ({"If-Match": "ETAG"}, 200),
        ({"If-Match": '"other"'}, 412),
        ({"If-Match": "W/ETAG"}, 412),  # If-Match compares strongly
        ({"If-Match": "*"}, 200),
        ({"If-Modified-Since": "FUTURE"}, 304),
        ({"If-Modified-Since": "PAST"}, 200),
        ({"If-Unmodified-Since": "PAST"}, 412),
        ({"If-Unmodified-Since": "FUTURE"}, 200),
    ],
)
async def test_conditional_requests_use_the_s3_etag(
    world: World, url: str, headers: dict[str, str], status: int
) -> None:
    etag = f'"{md5(DATA)}"'
    past = format_datetime(clock.now().replace(year=2000), usegmt=True)
    future = format_datetime(clock.now().replace(year=clock.now().year + 1), usegmt=True)
    sent = {
        k: v.replace("ETAG", etag).replace("PAST", past).replace("FUTURE", future)
        for k, v in headers.items()
    }
    got_status, got, answer = await world.fetch(url, **sent)
    assert got_status == status
    assert answer["ETag"] == etag
    if status == 200:
        assert got == DATA
    else:
        assert got == b"" or json.loads(got) == {
            "message": "The file does not match the precondition"
        }


async def test_a_multipart_file_is_served_from_its_parts(world: World) -> None:
    parts = [os.urandom(PART), b"end"]
    status, started = await world.files("file_editor", "PUT", "mp.bin", json={"num_parts": 2})
    etags: dict[str, Any] = {}
    for number, data in enumerate(parts, 1):
        etags[str(number)] = (await world.send(started["urls"][number - 1], data))[1]
    body = {"completed_upload_id": started["upload_id"], "etag_by_part": etags}
    assert (await world.files("file_editor", "PUT", "mp.bin", json=body))[0] == 200
    status, body = await world.files("file_reader", "GET", "mp.bin", params={"url_only": "1"})
    status, got, headers = await world.fetch(body["url"], **{"If-None-Match": "*"})
    assert status == 304
    status, got, headers = await world.fetch(body["url"], Range=f"bytes={PART}-")
    assert (status, got) == (206, b"end")
    status, got, _ = await world.fetch(body["url"], Range=f"bytes={PART - 5}-{PART + 1}")
    assert (status, got) == (206, parts[0][-5:] + b"en")  # across the parts' blobs
    status, got, _ = await world.fetch(body["url"])
    assert (status, got) == (200, b"".join(parts))
    assert headers["ETag"] == f'"{multipart_etag(parts)}"'
    assert headers["Content-Type"] == "application/octet-stream"


# -- what a browser may do with a download ------------------------------------------------
@pytest.mark.parametrize(
    ("content_type", "sandboxed"),
    [
        ("text/html", True),
        ("image/svg+xml", True),
        ("Application/XHTML+XML; charset=utf-8", True),
        ("text/plain", True),
        ("application/pdf", False),
        ("application/PDF; x=1", False),
    ],
)
async def test_every_download_but_pdf_is_sandboxed(
    world: World, content_type: str, sandboxed: bool
) -> None:
    status, _ = await world.upload("file_editor", "page", b"<p>x</p>", content_type=content_type)
    assert status == 200
    status, body = await world.files("file_reader", "GET", "page")
    status, data, headers = await world.fetch(body["url"])
    assert (status, data, headers["Content-Type"]) == (200, b"<p>x</p>", content_type)
    assert headers.get("Content-Security-Policy") == ("sandbox" if sandboxed else None)
    assert headers["X-Content-Type-Options"] == "nosniff"
