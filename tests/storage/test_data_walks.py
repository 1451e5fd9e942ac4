"""Walks read through an index: no full-scan step, and the work of a page does not grow
with the group (200 entries against 20,000), for the path walk, an equality filter on an
index field, and ordering by an index field."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from edge.data import plans
from edge.data.pages import collect
from edge.data.query import parse
from storage import data as store
from storage import data_walks as walks
from storage.data import INDEX_FIELDS, DataEntry
from storage.database import Database


def entry(group: str, i: int) -> DataEntry:
    index = {**dict.fromkeys(INDEX_FIELDS), "unicode_1": f"t{i % 10}", "number_1": i % 7}
    return DataEntry(
        group,
        f"/e/{i:06d}",
        {"i": i},
        **index,
        created_by="u",
        created_date="d",
        last_updated_by="u",
        last_updated_date="d",
        updated_by_list=[],
        updated_date_list=[],
        revision=1,
        signature="",
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    path: Path = tmp_path_factory.mktemp("walks") / "edge.db"
    opened = Database.open(path)
    for group, count in (("small", 200), ("large", 20_000)):
        opened.write_sync(
            lambda c, g=group, n=count: [store.save(c, entry(g, i)) for i in range(n)] and None
        )
    return opened


def page_cost(db: Database, group: str, params: dict[str, str]) -> Counter[str]:
    query = parse({"cascade": "true", "limit": "10", **params})
    plan = plans.build(group, "/e", query, [], True)
    with db.counting() as counts:
        got = db.read(lambda c: collect(walks.walk(c, plan), 10, 10_000, lambda r: True))
    assert len(got.rows) == 10
    return counts


@pytest.mark.parametrize(
    "params",
    [{}, {"unicode_1": "t3"}, {"order_by": "number_1"}, {"order_by": "unicode_1", "desc": "true"}],
)
def test_a_page_costs_the_same_in_a_large_group(db: Database, params: dict[str, str]) -> None:
    small, large = page_cost(db, "small", params), page_cost(db, "large", params)
    assert large["full_scan_steps"] == 0
    assert large["vm_steps"] <= small["vm_steps"] * 1.5 + 50, (small, large)
