"""A real `edge serve` killed (SIGKILL) in the middle of an upload, then started again: no
entry for the unfinished file, no temporary file and no unindexed blob left, a multipart
upload in progress survives, and every upload works afterwards."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import apsw
import pytest

from tests.cli.test_serve_process import PASSWORD, Server, _send, _start, servers  # noqa: F401

PART = 5 * 1024 * 1024  # the default smallest part


def call(server: Server, method: str, path: str, token: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    reply = _send(urllib.request.Request(server.base + path, data, headers, method=method))
    assert reply.status in (200, 201), (method, path, reply.status, reply.text)
    return reply.json()


def put_bytes(url: str, data: bytes) -> tuple[int, str]:
    request = urllib.request.Request(url, data, method="PUT")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.headers["ETag"]


def get_bytes(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return bytes(response.read())


def sign_in(server: Server, **extra: str) -> str:
    form = {"grant_type": "password", "username": "admin", "password": PASSWORD, **extra}
    data = urllib.parse.urlencode(form).encode()
    reply = _send(urllib.request.Request(server.base + "/v2/auth/token", data=data))
    assert reply.status == 201, reply.text
    return str(reply.json()["access_token"])  # type: ignore[index]


def begin_upload_and_stall(url: str, total: int, sent: bytes) -> socket.socket:
    """A PUT that announces `total` bytes and sends only `sent`: the server is mid-stream."""
    parts = urllib.parse.urlsplit(url)
    conn = socket.create_connection((parts.hostname, parts.port))
    head = (
        f"PUT {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Length: {total}\r\n\r\n"
    )
    conn.sendall(head.encode() + sent)
    return conn


def temporary_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "tmp").glob("blob-*.tmp"))


def wait_for_bytes_on_disk(data_dir: Path, at_least: int) -> None:
    deadline = time.monotonic() + 30  # a bound on failure: a loaded server writes late
    while time.monotonic() < deadline:
        if any(p.stat().st_size >= at_least for p in temporary_files(data_dir)):
            return
        time.sleep(0.02)
    pytest.fail("the upload never reached the disk")


def indexed_blobs(data_dir: Path) -> set[str]:
    conn = apsw.Connection(str(data_dir / "edge.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {str(r[0]) for r in conn.execute("SELECT blob FROM file_blobs")}
    finally:
        conn.close()


def blobs_on_disk(data_dir: Path) -> set[str]:
    return {p.name for p in (data_dir / "blobs").glob("*/*") if p.is_file()}


@pytest.mark.slow
def test_killed_mid_upload_then_restarted(tmp_path: Path, servers: list[Server]) -> None:  # noqa: F811
    data_dir = tmp_path / "data"
    first = _start(data_dir, PASSWORD, "first")
    servers.append(first)
    staff = sign_in(first)
    call(first, "POST", "/v2/orgs", staff, {"name": "Crash", "alias": "crash"})
    token = sign_in(first, scope="crash")
    group = call(first, "POST", "/v2/groups", token, {"name": "G"})["group"]["id"]
    files = f"/v2/groups/{group}/files"
    kept = os.urandom(1000)
    assert put_bytes(call(first, "PUT", f"{files}/kept.bin", token, {})["url"], kept)[0] == 200
    multipart = call(first, "PUT", f"{files}/multi.bin", token, {"num_parts": 2})
    part_one = os.urandom(PART)
    _, etag_one = put_bytes(multipart["urls"][0], part_one)

    url = call(first, "PUT", f"{files}/big.bin", token, {})["url"]
    stalled = begin_upload_and_stall(url, 20 * 1024 * 1024, os.urandom(3 * 1024 * 1024))
    wait_for_bytes_on_disk(data_dir, 1024 * 1024)
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(timeout=30)
    stalled.close()
    assert temporary_files(data_dir)  # the kill left half a file behind...
    orphan = data_dir / "blobs" / "zz" / "zzRenamedNeverIndexed000"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"as a kill between rename and commit leaves it")

    second = _start(data_dir, PASSWORD, "second")
    servers.append(second)
    assert temporary_files(data_dir) == []  # ...which the start's sweep removed
    assert not orphan.exists()
    assert blobs_on_disk(data_dir) == indexed_blobs(data_dir)
    token = sign_in(second, scope="crash")
    missing = _send(
        urllib.request.Request(
            f"{second.base}{files}/big.bin", headers={"Authorization": f"Bearer {token}"}
        )
    )
    assert missing.status == 404  # no entry for the file that never finished
    kept_url = call(second, "GET", f"{files}/kept.bin", token)["url"]
    assert get_bytes(kept_url) == kept

    # The multipart upload survived the kill: its second part and completion still work.
    part_two = b"the last part"
    _, etag_two = put_bytes(multipart["urls"][1].replace(first.base, second.base), part_two)
    done = {
        "completed_upload_id": multipart["upload_id"],
        "etag_by_part": {"1": etag_one, "2": etag_two},
    }
    assert call(second, "PUT", f"{files}/multi.bin", token, done) == {"message": "Success"}
    got = call(second, "GET", f"{files}/multi.bin", token)
    digests = hashlib.md5(part_one).digest() + hashlib.md5(part_two).digest()
    assert got["file"]["etag"] == f"{hashlib.md5(digests).hexdigest()}-2"
    assert get_bytes(got["url"]) == part_one + part_two

    again = os.urandom(2 * 1024 * 1024)
    assert put_bytes(call(second, "PUT", f"{files}/big.bin", token, {})["url"], again)[0] == 200
    assert get_bytes(call(second, "GET", f"{files}/big.bin", token)["url"]) == again
    assert second.stop(signal.SIGTERM) == 0
    assert blobs_on_disk(data_dir) == indexed_blobs(data_dir)
