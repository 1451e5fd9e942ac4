"""Files attacked from outside: hostile paths, bodies, presigned URLs, ranges and races,
each a request an outsider can send, each answered with the status docs/files.md gives
(never a 500, never a URL that works for more than it was issued for)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import json
import os
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from storage import blobs
from tests import wire
from tests.files import PART, relative
from tests.world import World

HUGE = int("9" * 400)  # past what a float holds
NOT_IN_PROGRESS = "completed_upload_id: is not an upload in progress at this path"


pytestmark = pytest.mark.world("content", files_min_part_bytes=PART)


async def start_parts(world: World, path: str, parts: list[bytes]) -> tuple[str, list[str]]:
    """A multipart upload with every part sent: its ID and the parts' ETags, unquoted."""
    status, started = await world.files("file_editor", "PUT", path, json={"num_parts": len(parts)})
    assert status == 200, started
    etags = []
    for url, data in zip(started["urls"], parts, strict=True):
        status, etag, _ = await world.send(url, data)
        assert status == 200
        etags.append(etag.strip('"'))
    return started["upload_id"], etags


# -- bodies --------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["number_1", "number_2"])
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_an_integer_past_64_bits_is_a_400(world: World, method: str, field: str) -> None:
    """As for data (edge/kernel/numbers.py): no integer is quietly rounded to a float."""
    assert (await world.upload("file_editor", "n.txt", b"n"))[0] == 200
    for value in (HUGE, -HUGE, 2**63):
        got = await world.files("file_editor", method, "n.txt", json={field: value})
        assert got == (400, {"message": f"{field}: must fit in 64 bits"})
    got = await world.files("file_editor", method, "n.txt", json={field: 1e300})
    assert got[0] == 200, got


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("\u0663", "etag_by_part.\u0663: is not a part number"),  # an Arabic-Indic 3
        ("\uff11", "etag_by_part.\uff11: is not a part number"),  # a full-width 1
        (" 1", "etag_by_part. 1: is not a part number"),
        ("9" * 5000, f"etag_by_part.{'9' * 5000}: part numbers go from 1 to 2"),
    ],
)
async def test_a_part_number_is_ascii_digits(world: World, key: str, message: str) -> None:
    upload_id, etags = await start_parts(world, "k.bin", [os.urandom(PART), b"end"])
    completion = {"completed_upload_id": upload_id, "etag_by_part": {key: etags[0]}}
    got = await world.files("file_editor", "PUT", "k.bin", json=completion)
    assert got == (400, {"message": message})
    assert await world.stored("k.bin") is None


# -- paths ---------------------------------------------------------------------------------
async def as_sent(world: World, method: str, raw: str, body: bytes = b"") -> tuple[int, Any]:
    """A call with its path exactly as written: HTTP client libraries resolve dot segments
    (also percent-encoded ones) before they send a request."""
    token = await world.token("file_editor")
    head = (
        f"{method} /v2/groups/{world.files_group_id}/files/{raw} HTTP/1.1\r\n"
        f"Host: edge\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    status, reply = wire.status_and_body(await wire.reply(world.api, head.encode() + body))
    return status, json.loads(reply)


@pytest.mark.parametrize("raw", ["%2e%2e", "a/%2E/b", "a/%2e%2e/b", "%2e%2e/%2e%2e/x"])
async def test_dot_segments_are_not_paths(world: World, raw: str) -> None:
    """A URL resolves '.' and '..' before a server sees it: a file there could be stored
    but never fetched through its presigned URL."""
    for method, body in (("PUT", b"{}"), ("GET", b""), ("PATCH", b"{}"), ("DELETE", b"")):
        got = await as_sent(world, method, raw, body)
        assert got == (400, {"message": "path: '.' and '..' are not path segments"}), method


CONTROLS = ["a%09", "a%0D", "%09a", "a%0D/b", "a%0Ab", "a%0A", "a%C2%85b", "a%7F"]  # C1 too


@pytest.mark.parametrize("raw", CONTROLS)
async def test_control_characters_at_an_end_are_refused_not_dropped(world: World, raw: str) -> None:
    got = await world.files("file_editor", "PUT", raw, json={})
    assert got == (400, {"message": "path: must not contain control characters"})


# -- the presigned URLs' guard -------------------------------------------------------------
def spelled(url: str, query: str) -> str:
    return urlsplit(url)._replace(query=query).geturl()


async def download_url(world: World) -> str:
    assert (await world.upload("file_editor", "s.bin", b"secret")) == (200, b"")
    status, body = await world.files("file_reader", "GET", "s.bin", params={"url_only": ""})
    assert status == 200
    return str(body["url"])


async def test_a_url_is_its_exact_query_and_nothing_more(world: World) -> None:
    url = await download_url(world)
    query = dict(parse_qsl(urlsplit(url).query))
    expires, signature, rights = query["expires"], query["signature"], query["rights"]
    given = f"expires={expires}&rights={rights}&signature={signature}"
    assert (await world.fetch(spelled(url, given)))[:2] == (200, b"secret")
    for changed in (
        f"{given}&signature=AAAA",  # a parameter twice: the first would win
        f"{given}&expires=9999999999",
        f"{given}&rights=read,write",
        f"expires=+{expires}&rights={rights}&signature={signature}",
        f"expires=0{expires}&rights={rights}&signature={signature}",
        f"expires={expires[:3]}_{expires[3:]}&rights={rights}&signature={signature}",
        f"expires={expires}&rights=,{rights}&signature={signature}",
        f"expires={expires}&rights={rights},&signature={signature}",
        f"{given}&part_number=0",
        f"{given}&upload_id=",
    ):
        status, raw, _ = await world.fetch(spelled(url, changed))
        assert status == 403, (changed, raw)


async def test_an_upload_url_is_its_exact_query(world: World) -> None:
    status, reply = await world.files("file_editor", "PUT", "q.bin", json={})
    url = reply["url"]
    query = urlsplit(url).query
    for changed in (f"{query}&{query}", f"{query}&part_number=0"):
        assert (await world.send(spelled(url, changed), b"x"))[0] == 403
    assert await world.stored("q.bin") is None
    assert (await world.send(url, b"x"))[0] == 200


# -- ranges ----------------------------------------------------------------------------------
async def test_a_suffix_of_no_bytes_is_416(world: World) -> None:
    """RFC 9110 14.1.3: a suffix range needs a non-zero length to be satisfiable."""
    url = await download_url(world)
    status, raw, headers = await world.fetch(url, Range="bytes=-0")
    assert status == 416 and headers["Content-Range"] == "bytes */6", raw
    assert (await world.fetch(url, Range="bytes=-2"))[:2] == (206, b"et")


# -- deleting ----------------------------------------------------------------------------------
async def test_a_delete_refuses_a_repeated_parameter(world: World) -> None:
    assert (await world.upload("file_editor", "r/a.txt", b"a"))[0] == 200
    got = await world.files("org_admin", "DELETE", "r", params=[("cascade", "1")] * 2)
    assert got == (400, {"message": "cascade: was given more than once"})
    assert await world.stored("r/a.txt") is not None


# -- races -------------------------------------------------------------------------------------
@pytest.mark.parametrize("rival_runs", ["before the parts are linked", "after"])
async def test_a_completion_that_lost_a_race_is_the_finished_upload_400(
    world: World, monkeypatch: pytest.MonkeyPatch, rival_runs: str
) -> None:
    """Two completions of one upload at once: one makes the file, the other is answered as
    a completion of a finished upload is (not a 404, not a 500 on parts already gone)."""
    parts = [os.urandom(PART), b"end"]
    upload_id, _ = await start_parts(world, "race.bin", parts)
    completion: dict[str, Any] = {"completed_upload_id": upload_id, "num_parts": 2}
    uploads = world.site.services.uploads
    adopt = uploads._adopt
    rival: list[tuple[int, Any]] = []

    async def adopt_beside_a_rival(*args: Any) -> list[tuple[str, int]]:
        if rival:  # the rival's own call
            return await adopt(*args)
        rival.append((0, None))
        names = await adopt(*args) if rival_runs == "after" else []
        rival[0] = await world.files("file_editor", "PUT", "race.bin", json=completion)
        return names or await adopt(*args)

    monkeypatch.setattr(uploads, "_adopt", adopt_beside_a_rival)
    got = await world.files("file_editor", "PUT", "race.bin", json=completion)
    assert rival[0] == (200, {"message": "Success"})
    assert got == (400, {"message": NOT_IN_PROGRESS})
    status, body = await world.files("file_reader", "GET", "race.bin")
    assert status == 200 and body["file"]["size"] == PART + 3
    assert (await world.fetch(body["url"]))[:2] == (200, b"".join(parts))


# -- slow clients ------------------------------------------------------------------------------
async def test_an_upload_whose_bytes_stop_coming_is_408(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that sends the headers and a few bytes, then nothing: the upload is answered
    408 once no byte has come for `body_timeout`, rather than holding its connection and
    its temporary file for as long as the client likes."""
    services = world.site.services
    monkeypatch.setattr(services, "config", replace(services.config, body_timeout=0.5))
    status, reply = await world.files("file_editor", "PUT", "slow.bin", json={})
    assert status == 200
    target = relative(reply["url"])
    status_line = await wire.status_line(
        world.api, f"PUT {target} HTTP/1.1\r\nHost: edge\r\nContent-Length: 100\r\n\r\nabc".encode()
    )
    assert status_line.split()[1] == b"408", status_line
    assert await world.stored("slow.bin") is None
    assert not list(services.blobs.tmp.iterdir())


async def test_a_part_that_arrives_after_its_upload_completed_leaves_nothing(
    world: World,
) -> None:
    """Completing while a part is still streaming: the file is made of the parts already
    there; the late part is a 404 and leaves no folder of the finished upload behind."""
    status, started = await world.files("file_editor", "PUT", "late.bin", json={"num_parts": 2})
    assert status == 200
    assert (await world.send(started["urls"][0], b"first"))[0] == 200
    reader, writer = await wire.connect(world.api)
    target = relative(started["urls"][1])
    writer.write(f"PUT {target} HTTP/1.1\r\nHost: edge\r\nContent-Length: 6\r\n\r\nsec".encode())
    await writer.drain()
    completion = {"completed_upload_id": started["upload_id"], "num_parts": 1}
    assert await world.files("file_editor", "PUT", "late.bin", json=completion) == (
        200,
        {"message": "Success"},
    )
    writer.write(b"ond")
    try:
        async with asyncio.timeout(10):
            status_line = await reader.readline()
    finally:
        writer.close()
    assert status_line.split()[1] == b"404", status_line
    assert not (world.site.services.blobs.uploads / started["upload_id"]).exists()
    assert (await world.stored("late.bin") or {}).get("size") == len(b"first")


async def trickle(world: World, name: str, body_min_rate: int) -> bytes:
    """An upload of 6 bytes, one every 0.25 s (1.5 s in all, 4 bytes a second), with
    `body_timeout` 1 s: the status line it is answered. The upload outlasts body_timeout,
    and a loaded machine may stretch a gap between two bytes by up to 0.75 s before the
    server sees a stop (with body_timeout 0.5 s, a gap of 0.25 s too many was a 408)."""
    services = world.site.services
    config = replace(services.config, body_timeout=1.0, body_min_rate=body_min_rate)
    services.config = config
    status, reply = await world.files("file_editor", "PUT", name, json={})
    assert status == 200
    reader, writer = await wire.connect(world.api)
    target = relative(reply["url"])
    writer.write(f"PUT {target} HTTP/1.1\r\nHost: edge\r\nContent-Length: 6\r\n\r\n".encode())
    try:
        for byte in b"steady":
            writer.write(bytes([byte]))
            await writer.drain()
            with contextlib.suppress(TimeoutError):  # wait 0.25 s, reading: an early answer
                return await asyncio.wait_for(reader.readline(), 0.25)  # is read, not reset
        async with asyncio.timeout(10):
            return await reader.readline()
    finally:
        writer.close()


async def test_an_upload_that_keeps_coming_may_take_longer_than_body_timeout(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(world.site.services, "config", world.site.services.config)
    status_line = await trickle(world, "steady.bin", body_min_rate=1)
    assert status_line.split()[1] == b"200", status_line
    assert (await world.stored("steady.bin") or {}).get("size") == 6


async def test_an_upload_that_trickles_under_the_minimum_rate_is_408(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A byte just inside every `body_timeout` (one every 59 s against 60 s) passed the
    per-read timeout and held the upload open for as long as the client liked: a window of
    `body_timeout` must bring `body_min_rate` bytes a second."""
    monkeypatch.setattr(world.site.services, "config", world.site.services.config)
    status_line = await trickle(world, "trickle.bin", body_min_rate=100)
    assert status_line.split()[1] == b"408", status_line
    assert await world.stored("trickle.bin") is None
    assert not list(world.site.services.blobs.tmp.iterdir())


@pytest.mark.parametrize("sent", [5, 2 * blobs.CHUNK + 5])
async def test_a_client_that_hangs_up_at_once_leaves_no_temporary_file(
    world: World, sent: int
) -> None:
    """The headers and some bytes (a few, or chunks already handed to the store's threads),
    then the client closes its end: the upload is given up (the test server cancels the
    handler, as a shutdown does) and its temporary file goes at once, not at the next start.
    Nothing of it is held: the same URL then takes the file, an empty one at that."""
    status, reply = await world.files("file_editor", "PUT", "gone.bin", json={})
    assert status == 200
    reader, writer = await wire.connect(world.api)
    target = relative(reply["url"])
    length = f"Content-Length: {sent + 5}"
    writer.write(f"PUT {target} HTTP/1.1\r\nHost: edge\r\n{length}\r\n\r\n".encode())
    writer.write(os.urandom(sent))
    writer.write_eof()
    await reader.read()
    writer.close()
    tmp = world.site.services.blobs.tmp
    # Gone within moments (a loaded 2-core CI run once took over 2 s); a file kept until
    # the body timeout (60 s) or the next start still fails here.
    deadline = asyncio.get_running_loop().time() + 10
    while list(tmp.iterdir()) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    assert not list(tmp.iterdir())
    assert await world.stored("gone.bin") is None
    assert (await world.send(reply["url"], b""))[0] == 200
    assert (await world.stored("gone.bin") or {}).get("size") == 0


# -- HEAD ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("header", "status"), [("Range: bytes=50-", b"416"), ('If-Match: "other"', b"412")]
)
async def test_a_refused_head_sends_no_body(world: World, header: str, status: bytes) -> None:
    """A body after a HEAD's headers would be read as the start of the next response on the
    same connection."""
    target = relative(await download_url(world))
    reply = await wire.reply(
        world.api,
        f"HEAD {target} HTTP/1.1\r\nHost: edge\r\n{header}\r\n\r\n"
        f"GET {target} HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n".encode(),
    )
    first, _, rest = reply.partition(b"\r\n\r\n")
    assert first.split()[1] == status
    assert rest.startswith(b"HTTP/1.1 200 "), rest[:80]
    assert rest.endswith(b"\r\n\r\nsecret")


# -- lists -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["NaN", "nan", "inf", "-Infinity", "1e999"])
async def test_a_number_filter_is_finite(world: World, value: str) -> None:
    """As for data: NaN would be bound as NULL and match nothing, without a word."""
    for name in ("size_gte", "size.lt", "number_1_gt"):
        got = await world.files("file_reader", "GET", "/", params={"cascade": "", name: value})
        assert got == (400, {"message": f"{name}: must be a finite number"})


# -- Expect: 100-continue ------------------------------------------------------------------------
async def expecting(world: World, url: str, length: int) -> tuple[bytes, asyncio.StreamReader, Any]:
    """A PUT that waits for `100 Continue` before its body: the first status line back."""
    reader, writer = await wire.connect(world.api)
    writer.write(
        f"PUT {relative(url)} HTTP/1.1\r\nHost: edge\r\nContent-Length: {length}\r\n"
        "Expect: 100-continue\r\n\r\n".encode()
    )
    async with asyncio.timeout(10):
        return await reader.readline(), reader, writer


async def test_an_upload_refused_before_its_body_is_refused_before_100_continue(
    world: World,
) -> None:
    """curl -T and the S3 SDKs wait for `100 Continue` before a large body: a URL that is
    not valid, or a length past the limit, is answered before they send it."""
    status, reply = await world.files("file_editor", "PUT", "expect.bin", json={})
    assert status == 200
    tampered = reply["url"].replace("signature=", "signature=A")
    for url, length, refusal in ((tampered, 5, b"403"), (reply["url"], 1 << 40, b"413")):
        first, _, writer = await expecting(world, url, length)
        writer.close()
        assert first.split()[1] == refusal, first
    first, reader, writer = await expecting(world, reply["url"], 5)
    try:
        assert first.split()[1] == b"100", first
        writer.write(b"hello")
        async with asyncio.timeout(10):
            await reader.readline()  # the blank line that ends the 100
            final = await reader.readline()
    finally:
        writer.close()
    assert final.split()[1] == b"200", final
    assert (await world.stored("expect.bin") or {}).get("size") == 5


# -- Content-Encoding ----------------------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "gzip, identity"])
async def test_an_upload_with_a_content_encoding_is_refused_not_unpacked(
    world: World, encoding: str
) -> None:
    """aiohttp unpacks a request body sent with Content-Encoding: the file would hold other
    bytes than were sent (and an ETag that is not their MD5, which S3 clients check), or the
    upload failed on its length. S3 keeps the bytes as sent; edge, which keeps no encoding
    to send back, refuses them."""
    data = gzip.compress(b"hello " * 1000)
    status, reply = await world.files("file_editor", "PUT", "packed.gz", json={})
    assert status == 200
    got = await world.send(reply["url"], data, **{"Content-Encoding": encoding})
    assert got[0] == 400 and json.loads(got[2]) == {
        "message": "Content-Encoding: an upload is kept as sent; send it without one"
    }
    assert await world.stored("packed.gz") is None
    assert (await world.send(reply["url"], data, **{"Content-Encoding": "identity"}))[0] == 200
    assert (await world.stored("packed.gz") or {}).get("etag") == hashlib.md5(data).hexdigest()
