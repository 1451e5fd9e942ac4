"""Storage quotas: per group and per installation, parts of unfinished uploads included; a
clear 413 whether the Content-Length or the bytes themselves go past, nothing stored."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from edge.kernel.config import Config
from tests.conftest import make_config
from tests.files import PART
from tests.world import World

GROUP_QUOTA, TOTAL_QUOTA = 4 * PART, 6 * PART
GROUP_FULL = f"Storage quota exceeded: a group may hold at most {GROUP_QUOTA} bytes of files"
TOTAL_FULL = (
    f"Storage quota exceeded: this installation may hold at most {TOTAL_QUOTA} bytes of files"
)


@pytest.fixture
def config(data_dir: Path) -> Config:
    return make_config(
        data_dir,
        files_min_part_bytes=PART,
        files_group_quota_bytes=GROUP_QUOTA,
        files_quota_bytes=TOTAL_QUOTA,
    )


@pytest.fixture
def world(content_world: World) -> World:
    """The world with its files part (tests/world.py): Scans, Strict, Archive, their callers."""
    return content_world


async def test_a_group_quota_refuses_what_would_pass_it(world: World) -> None:
    assert (await world.upload("file_editor", "a.bin", os.urandom(3 * PART)))[0] == 200
    status, body = await world.upload("file_editor", "b.bin", os.urandom(2 * PART))
    assert (status, json.loads(body)) == (413, {"message": GROUP_FULL})
    assert await world.stored("b.bin") is None
    assert list(world.site.services.blobs.tmp.iterdir()) == []
    assert (await world.upload("file_editor", "b.bin", os.urandom(PART)))[0] == 200  # exactly full


async def test_an_overwrite_counts_only_the_difference(world: World) -> None:
    assert (await world.upload("file_editor", "a.bin", os.urandom(3 * PART)))[0] == 200
    assert (await world.upload("file_editor", "a.bin", os.urandom(4 * PART)))[0] == 200
    assert (await world.files("file_deleter", "DELETE", "a.bin"))[0] == 200
    assert (await world.upload("file_editor", "c.bin", os.urandom(4 * PART)))[0] == 200  # freed


async def test_the_installation_quota_spans_groups(world: World) -> None:
    assert (await world.upload("file_editor", "a.bin", os.urandom(4 * PART)))[0] == 200
    group = world.legacy_group_id
    status, body = await world.upload("org_admin", "b.bin", os.urandom(3 * PART), group=group)
    assert (status, json.loads(body)) == (413, {"message": TOTAL_FULL})
    assert (await world.upload("org_admin", "b.bin", os.urandom(2 * PART), group=group))[0] == 200


async def test_parts_waiting_for_completion_count(world: World) -> None:
    status, started = await world.files("file_editor", "PUT", "m.bin", json={"num_parts": 3})
    for url in started["urls"][:2]:
        assert (await world.send(url, os.urandom(2 * PART)))[0] == 200
    status, _, body = await world.send(started["urls"][2], os.urandom(PART))
    assert (status, json.loads(body)) == (413, {"message": GROUP_FULL})
    assert (await world.upload("file_editor", "x.bin", b"1"))[0] == 413  # the parts hold the room
    complete = {"completed_upload_id": started["upload_id"], "num_parts": 2}
    assert (await world.files("file_editor", "PUT", "m.bin", json=complete))[0] == 200
    entry = await world.stored("m.bin")
    assert entry is not None and entry["size"] == 4 * PART
