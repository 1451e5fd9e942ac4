"""Signed entries: a change made to the database file behind the server's back makes
`verified` false (docs/data.md, "Signed entries")."""

from __future__ import annotations

import apsw
import pytest

from storage import layout
from tests.world import World


def tamper(world: World, sql: str) -> None:
    """Write straight to edge.db, as someone with the file (not the server) would."""
    conn = apsw.Connection(str(layout.database_path(world.site.services.config.data_dir)))
    try:
        conn.execute(sql, (world.org_group_id,))
    finally:
        conn.close()


@pytest.mark.parametrize(
    "sql",
    [
        """UPDATE data SET value = '{"dose":999}' WHERE group_id = ?""",
        "UPDATE data SET unicode_1 = 'other' WHERE group_id = ?",
        "UPDATE data SET created_by = 'someoneelse00000' WHERE group_id = ?",
        "UPDATE data SET revision = 7 WHERE group_id = ?",
        "UPDATE data SET path = '/rx/2' WHERE group_id = ?",
    ],
)
async def test_a_row_changed_in_sqlite_fails_verification(world: World, sql: str) -> None:
    who = "org_admin"
    await world.put_data(who, "rx/1", {"dose": 5}, unicode_1="ward")
    _, body = await world.data(who, "GET", "rx/1", params={"verify": "true"})
    assert body["data"]["verified"] is True
    tamper(world, sql)
    _, body = await world.data(who, "GET", "rx", params={"cascade": "", "verify": "true"})
    assert [entry["verified"] for entry in body["data"]] == [False]


async def test_without_verify_nothing_is_claimed(world: World) -> None:
    who = "org_admin"
    await world.put_data(who, "x", 1)
    _, body = await world.data(who, "GET", "x")
    assert body["data"]["verified"] is False


async def test_the_signing_key_lives_apart_in_the_data_folder(world: World) -> None:
    key = layout.keys_dir(world.site.services.config.data_dir) / "data-signing.key"
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
