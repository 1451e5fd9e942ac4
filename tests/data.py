"""Helpers for the data tests: entries written straight through storage, signed as the
server signs them (the fast path for arranging large groups, as the benchmark does). The
callers and groups are the world's (tests/world.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from edge.data.signing import DataSigner
from edge.kernel import clock
from storage import data as store
from storage.data import INDEX_FIELDS, DataEntry


async def seed(world: Any, paths: list[str], group: str | None = None, **fields: Any) -> None:
    """Entries at `paths` in a group of a world (Ward unless told), made by its org admin."""
    signer = DataSigner.load_or_create(world.site.services.config.data_dir)
    now, who = clock.now_iso(), world.tenant.admin_id
    gid = group or world.org_group_id

    def entry(path: str) -> DataEntry:
        index = {name: fields.get(name) for name in INDEX_FIELDS}
        made = DataEntry(
            gid,
            path,
            {"p": path},
            **index,
            created_by=who,
            created_date=now,
            last_updated_by=who,
            last_updated_date=now,
            updated_by_list=[who],
            updated_date_list=[now],
            revision=1,
            signature="",
        )
        return replace(made, signature=signer.sign(made))

    def write(conn: Any) -> None:
        for path in paths:
            store.save(conn, entry(path))

    await world.site.services.db.write(write)
