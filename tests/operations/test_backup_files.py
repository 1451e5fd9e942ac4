"""Backups include the blobs and agree with the index while uploads, overwrites and
deletes run; a restored site serves every file it lists, byte for byte."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from pathlib import Path
from typing import Any

import apsw
import pytest

from edge.app import create_app
from edge.ops import backup
from storage.blobs import BlobStore
from tests.conftest import Api
from tests.factory import new_site
from tests.files import relative
from tests.tenants import new_tenant


async def churn(api: Api, token: str, group: str, stop: asyncio.Event, done: list[int]) -> None:
    """Upload, overwrite and delete files until asked to stop, counting writes in `done`."""
    while not stop.is_set():
        path = f"/v2/groups/{group}/files/c/{done[0] % 5}.bin"
        status, reply = await api.call("PUT", path, token, json={})
        assert status == 200, reply
        response = await api.client.put(relative(reply["url"]), data=os.urandom(1000 + done[0]))
        assert response.status == 200
        if done[0] % 3 == 2:
            assert (await api.call("DELETE", path, token))[0] == 200
        done[0] += 1


def wait_for_writes(done: list[int], count: int, seconds: float = 30.0) -> None:
    """Block (a backup thread) until the uploads made `count` more writes: the backup must
    run while they do, however slow the machine."""
    start, deadline = done[0], time.monotonic() + seconds
    while done[0] - start < count and time.monotonic() < deadline:
        time.sleep(0.005)


def listed(database: Path) -> dict[str, str]:
    conn = apsw.Connection(str(database), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute(
            "SELECT b.blob, f.etag FROM file_blobs b JOIN files f ON f.id = b.file_id"
        )
        return {str(b): str(e) for b, e in rows}
    finally:
        conn.close()


async def test_a_backup_during_uploads_holds_exactly_the_blobs_it_lists(
    aiohttp_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site_dir, copy = tmp_path / "site", tmp_path / "copy"
    site = new_site(site_dir)
    api = Api(await aiohttp_client(create_app(site)))
    tenant = await new_tenant(site, api)
    token = await tenant.token()
    status, reply = await api.call("POST", "/v2/groups", token, json={"name": "G"})
    group = reply["group"]["id"]
    copy_file = backup._copy
    done = [0]
    during: list[int] = []

    def slow_copy(source: Path, target: Path) -> None:  # let the uploads run during the copy
        if not during:
            during.append(done[0])
            wait_for_writes(done, 5)
        time.sleep(0.005)
        copy_file(source, target)

    monkeypatch.setattr(backup, "_copy", slow_copy)
    stop = asyncio.Event()
    writes = asyncio.create_task(churn(api, token, group, stop, done))
    await asyncio.to_thread(wait_for_writes, done, 3)
    await asyncio.to_thread(backup.backup, site_dir, copy, lambda _: None)
    stop.set()
    await writes
    assert during and done[0] - during[0] >= 5, "uploads should run during the backup"

    in_copy = listed(copy / "edge.db")
    assert in_copy, "the backup should hold some files"
    store = BlobStore(copy)
    for blob, etag in in_copy.items():
        assert hashlib.md5(store.path_of(blob).read_bytes()).hexdigest() == etag
    assert {n for names in store.names_on_disk() for n in names} == set(in_copy)

    restored = tmp_path / "restored"
    backup.restore(copy, restored, force=False, echo=lambda _: None)
    again = Api(await aiohttp_client(create_app(new_site(restored))))
    status, body = await again.call(
        "GET", f"/v2/groups/{group}/files/c", token, params={"cascade": "true"}
    )
    assert status == 200 and len(body["files"]) == len(in_copy)
    for entry, url in zip(body["files"], body["urls"], strict=True):
        response = await again.client.get(relative(url))
        assert hashlib.md5(await response.read()).hexdigest() == entry["etag"]
