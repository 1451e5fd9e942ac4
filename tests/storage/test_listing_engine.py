"""The list engine against a throwaway table: custom attributes, folding, NULL sorts, safety.

The table here is built from code in a temp database, so these tests pin the engine's
SQL without depending on any resource's schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw
import pytest
from multidict import MultiDict

from api.listing import Listable, parse
from edge.kernel.errors import ValidationError
from edge.kernel.listing import CursorCodec, check_query
from storage.listing import (
    EVERYTHING,
    NOTHING,
    Field,
    Filter,
    ListQuery,
    Page,
    Scope,
    Table,
    expression,
    fetch,
)
from storage.pragmas import configure

SCHEMA = """
CREATE TABLE things (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL,
    name_folded       TEXT NOT NULL,
    tags              TEXT NOT NULL DEFAULT '[]',
    created_date      TEXT NOT NULL,
    custom_attributes TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(custom_attributes))
) STRICT;
CREATE VIRTUAL TABLE things_fts USING fts5 (name, tags);
"""
TABLE = Table(
    "things",
    {
        "id": Field("id", "things.id"),
        "name": Field("text", "things.name", folded="things.name_folded"),
        "tags": Field("tags", "things.tags", sortable=False),
        "created_date": Field("datetime", "things.created_date"),
    },
    fts="things_fts",
    fts_columns=("name", "tags"),
    json_columns=("custom_attributes",),
)
# id -> (name, tags, custom attributes). IDs sort in the order they are listed here.
ROWS: dict[str, tuple[str, list[str], dict[str, Any]]] = {
    "r1": ("Oslo office", ["north"], {"age": 30, "city": "Oslo", "vip": True, "code": "01234"}),
    "r2": ("Bergen depot", ["west"], {"age": 45, "city": "Bergen", "vip": False}),
    "r3": ("Unknown shed", [], {"age": "unknown", "city": "oslo"}),
    "r4": ("Bare", [], {}),
    "r5": ("Null city", ["north", "west"], {"age": 29.5, "city": None}),
    "r6": ("Ärger Straße", [], {"age": 30, "nested": {"x": 1}}),
    "r7": ("Empty string", [], {"age": "", "city": ""}),
}
MALICIOUS = (
    "custom_attributes.a') OR 1=1--",
    "custom_attributes.a\"') OR 1=1--",
    "custom_attributes.a.b",
    "custom_attributes.",
    "custom_attributes",
    "name_folded",
    "things.id",
    "other.a",
)


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[apsw.Connection]:
    connection = apsw.Connection(str(tmp_path / "engine.db"))
    configure(connection, writer=True)
    connection.execute(SCHEMA)
    for number, (row_id, (name, tags, attrs)) in enumerate(ROWS.items()):
        values = (row_id, name, name.casefold(), json.dumps(tags), f"2026-01-0{number + 1}")
        connection.execute(
            "INSERT INTO things (id, name, name_folded, tags, created_date, custom_attributes)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (*values, json.dumps(attrs)),
        )
        connection.execute(
            "INSERT INTO things_fts (rowid, name, tags)"
            " SELECT rowid, name, ? FROM things WHERE id = ?",
            (" ".join(tags), row_id),
        )
    yield connection
    connection.close()


def ids(conn: apsw.Connection, *filters: Filter, **query: Any) -> list[str]:
    page = fetch(conn, TABLE, ListQuery(filters=filters, **{"limit": 1000, **query}))
    return [row["id"] for row in page.rows]


def walk(conn: apsw.Connection, query: ListQuery) -> list[str]:
    seen: list[str] = []
    after = None
    for _ in range(len(ROWS) + 2):
        page: Page = fetch(conn, TABLE, replace(query, after=after))
        seen.extend(row["id"] for row in page.rows)
        if not page.more:
            assert page.last is None
            return seen
        assert page.last is not None
        after = page.last
    raise AssertionError("paging did not end")


# -- custom attribute filters ------------------------------------------------------------
@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("eq", "Oslo", ["r1"]),
        ("eq", "oslo", ["r3"]),
        ("eq", "", ["r7"]),
        ("regex", "^[Oo]slo$", ["r1", "r3"]),
        ("regex", "^B", ["r2"]),
        ("sw", "OS", ["r1", "r3"]),
        ("sw", "berg", ["r2"]),
        ("contains", "ERG", ["r2"]),
        ("contains", "zzz", []),
        ("gte", "Oslo", ["r1", "r3"]),
        ("lte", "Bergen", ["r2", "r7"]),
        ("gt", "Oslo", ["r3"]),
        ("lt", "Oslo", ["r2", "r7"]),
    ],
)
def test_string_attribute_filters(
    conn: apsw.Connection, op: str, value: str, expected: list[str]
) -> None:
    assert ids(conn, Filter("custom_attributes.city", op, value)) == expected


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("eq", 30, ["r1", "r6"]),
        ("eq", 30.0, ["r1", "r6"]),
        ("eq", 29.5, ["r5"]),
        ("eq", "30", []),  # text never equals a number
        ("eq", (30, "30"), ["r1", "r6"]),
        ("eq", "unknown", ["r3"]),
        ("gte", 30, ["r1", "r2", "r6"]),  # 'unknown' and '' are text: not >= 30
        ("gt", 30, ["r2"]),
        ("lte", 30, ["r1", "r5", "r6"]),
        ("lt", 30, ["r5"]),
        ("gte", 29.5, ["r1", "r2", "r5", "r6"]),
        ("lt", 0, []),
        ("gte", "u", ["r3"]),  # a text bound compares with text values only
        ("regex", r"^\d+$", ["r1", "r2", "r6"]),
        ("regex", r"^29\.5$", ["r5"]),
    ],
)
def test_number_attribute_filters(
    conn: apsw.Connection, op: str, value: Any, expected: list[str]
) -> None:
    assert ids(conn, Filter("custom_attributes.age", op, value)) == expected


@pytest.mark.parametrize(("value", "expected"), [(True, ["r1"]), (False, ["r2"])])
def test_bool_attribute_eq(conn: apsw.Connection, value: bool, expected: list[str]) -> None:
    assert ids(conn, Filter("custom_attributes.vip", "eq", value)) == expected


def test_numeric_looking_text_attribute_matches_through_candidates(conn: apsw.Connection) -> None:
    assert ids(conn, Filter("custom_attributes.code", "eq", 1234)) == []
    assert ids(conn, Filter("custom_attributes.code", "eq", (1234, "01234"))) == ["r1"]


def test_attribute_filters_combine_with_and(conn: apsw.Connection) -> None:
    both = (Filter("custom_attributes.age", "eq", 30), Filter("custom_attributes.vip", "eq", 1))
    assert ids(conn, *both) == ["r1"]


def test_missing_attribute_matches_no_comparison(conn: apsw.Connection) -> None:
    for op, value in (("eq", ""), ("gte", ""), ("lte", "zzz"), ("regex", ".*"), ("sw", "")):
        assert "r4" not in ids(conn, Filter("custom_attributes.city", op, value)), op


# -- declared fields ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("eq", "ärger strasse", ["r6"]),  # casefold: ß == ss, Ä == ä
        ("eq", "ÄRGER STRASSE", ["r6"]),
        ("eq", "arger strasse", []),
        ("sw", "ÄRG", ["r6"]),
        ("contains", "STRASSE", ["r6"]),
        ("eq", "OSLO OFFICE", ["r1"]),
        ("regex", "^O", ["r1"]),
    ],
)
def test_name_compares_on_the_folded_copy(
    conn: apsw.Connection, op: str, value: str, expected: list[str]
) -> None:
    assert ids(conn, Filter("name", op, value)) == expected


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("eq", ("north",), ["r1"]),
        ("eq", ("west", "north"), ["r5"]),
        ("contains", ("north",), ["r1", "r5"]),
        ("contains", ("north", "west"), ["r5"]),
        ("contains_any", ("north", "west"), ["r1", "r2", "r5"]),
        ("contains_any", ("nowhere",), []),
    ],
)
def test_tag_filters(conn: apsw.Connection, op: str, value: Any, expected: list[str]) -> None:
    assert ids(conn, Filter("tags", op, value)) == expected


def test_datetime_range_and_day(conn: apsw.Connection) -> None:
    day = ("2026-01-02", "2026-01-03")
    assert ids(conn, Filter("created_date", "eq", day)) == ["r2", "r3"]
    assert ids(conn, Filter("created_date", "gte", "2026-01-06")) == ["r6", "r7"]
    assert ids(conn, Filter("created_date", "lt", "2026-01-02")) == ["r1"]


def test_search_and_search_fields(conn: apsw.Connection) -> None:
    assert ids(conn, search="nor") == ["r1", "r5"]
    assert ids(conn, search="nor", search_fields=("name",)) == []
    assert ids(conn, search="nor", search_fields=("tags",)) == ["r1", "r5"]
    assert ids(conn, search="oslo off") == ["r1"]
    assert ids(conn, search="!!!") == []


def test_a_table_without_search_refuses_one_rather_than_find_nothing(
    conn: apsw.Connection,
) -> None:
    """It added `WHERE 0`: an empty page, as if nothing had matched."""
    bare = replace(TABLE, fts=None, fts_columns=())
    with pytest.raises(LookupError, match="no full-text search"):
        fetch(conn, bare, ListQuery(search="oslo"))
    for query in (ListQuery(search="oslo"), ListQuery(search_fields=("name",))):
        with pytest.raises(ValidationError, match="search: is not offered"):
            check_query(bare, query)
    with pytest.raises(TypeError, match="things: offers search without a full-text index"):
        Listable("things", bare.kinds(), table=bare)
    assert (
        not Listable("things", bare.kinds(), table=bare, searchable=False).common().count("search")
    )


def test_a_row_is_found_through_another_tables_index(conn: apsw.Connection) -> None:
    """`fts_join`: an index row names the listed row by a column of its own (an access
    object is found by its target's name)."""
    conn.execute(
        "CREATE VIRTUAL TABLE places_fts USING fts5 (id UNINDEXED, place);"
        " INSERT INTO places_fts (id, place) VALUES ('r2', 'harbour'), ('r4', 'harbour hill');"
    )
    joined = replace(TABLE, fts="places_fts", fts_columns=("place",), fts_join=("things.id", "id"))
    page = fetch(conn, joined, ListQuery(search="harb"))
    assert [row["id"] for row in page.rows] == ["r2", "r4"]
    page = fetch(conn, joined, ListQuery(search="harbour hil", search_fields=("place",)))
    assert [row["id"] for row in page.rows] == ["r4"]


def test_object_count_respects_filters(conn: apsw.Connection) -> None:
    query = ListQuery(filters=(Filter("custom_attributes.age", "eq", 30),), object_count=True)
    page = fetch(conn, TABLE, query)
    assert (page.total, page.rows, page.more) == (2, [], False)


# -- ordering and keyset paging ---------------------------------------------------------------
def test_order_by_custom_attribute_puts_numbers_then_text(conn: apsw.Connection) -> None:
    # Numbers ascend; missing and null sort as '' (with the real ''), then other text.
    expected = ["r5", "r1", "r6", "r2", "r4", "r7", "r3"]
    assert ids(conn, order_by="custom_attributes.age") == expected
    assert ids(conn, order_by="custom_attributes.age", desc=True) == expected[::-1]


def test_order_by_name_ignores_case(conn: apsw.Connection) -> None:
    names = [ROWS[i][0] for i in ids(conn, order_by="name")]
    assert names == sorted(names, key=str.casefold)


@pytest.mark.parametrize("order_by", ["custom_attributes.age", "custom_attributes.city", "name"])
@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_keyset_walk_returns_every_row_once_in_order(
    conn: apsw.Connection, order_by: str, desc: bool, limit: int
) -> None:
    full = ids(conn, order_by=order_by, desc=desc)
    walked = walk(conn, ListQuery(limit=limit, order_by=order_by, desc=desc))
    assert walked == full
    assert sorted(walked) == sorted(ROWS)


def test_keyset_walk_with_a_filter(conn: apsw.Connection) -> None:
    query = ListQuery(
        limit=1,
        order_by="custom_attributes.city",
        filters=(Filter("custom_attributes.city", "sw", "o"),),
    )
    assert walk(conn, query) == ["r1", "r3"]


def test_offset_pages_match_the_full_order(conn: apsw.Connection) -> None:
    full = ids(conn, order_by="custom_attributes.age")
    pages = [ids(conn, order_by="custom_attributes.age", limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert sum(pages, []) == full and pages[-1] == []


def test_last_page_exactly_full_has_no_continuation(conn: apsw.Connection) -> None:
    page = fetch(conn, TABLE, ListQuery(limit=len(ROWS)))
    assert (len(page.rows), page.more, page.last) == (len(ROWS), False, None)
    page = fetch(conn, TABLE, ListQuery(limit=len(ROWS) - 1))
    assert page.more and page.last == (page.rows[-1]["created_date"], page.rows[-1]["id"])
    assert all("__sort" not in row for row in page.rows)


def test_scope_restricts_rows(conn: apsw.Connection) -> None:
    page = fetch(conn, TABLE, ListQuery(), "things.id IN (?, ?)", ("r2", "r4"))
    assert [row["id"] for row in page.rows] == ["r2", "r4"]


def test_narrowed_scope_keeps_both_conditions_whole(conn: apsw.Connection) -> None:
    """`a & b` is a AND b whatever either holds: an OR in one side cannot widen the other
    (`id = r1 OR id = r2 AND name = ...` would let r1 through)."""
    either = Scope("things.id = ? OR things.id = ?", ("r1", "r2"))
    scope = either & Scope("things.name = ?", ("Bergen depot",))
    assert [row["id"] for row in fetch(conn, TABLE, ListQuery(), *scope).rows] == ["r2"]
    assert fetch(conn, TABLE, ListQuery(), *(scope & NOTHING)).rows == []
    assert len(fetch(conn, TABLE, ListQuery(), *EVERYTHING).rows) == len(ROWS)


# -- nothing but whitelisted names reaches SQL ------------------------------------------------
@pytest.mark.parametrize("name", MALICIOUS)
def test_malicious_field_names_never_reach_sql(conn: apsw.Connection, name: str) -> None:
    with pytest.raises(KeyError):
        expression(TABLE, name)
    with pytest.raises(KeyError):
        fetch(conn, TABLE, ListQuery(filters=(Filter(name, "eq", 1),)))
    with pytest.raises(KeyError):
        fetch(conn, TABLE, ListQuery(order_by=name))
    with pytest.raises(ValidationError):
        check_query(TABLE, ListQuery(order_by=name))
    with pytest.raises(ValidationError):
        check_query(TABLE, ListQuery(filters=(Filter(name, "eq", 1),)))
    assert len(ids(conn)) == len(ROWS)


def test_malicious_search_field_never_reaches_fts(conn: apsw.Connection) -> None:
    bad = ("name} OR tags : x",)
    with pytest.raises(KeyError):
        fetch(conn, TABLE, ListQuery(search="x", search_fields=bad))
    with pytest.raises(ValidationError, match="search_fields"):
        check_query(TABLE, ListQuery(search="x", search_fields=bad))


def test_filter_values_are_bound_not_spliced(conn: apsw.Connection) -> None:
    for value in ("x' OR '1'='1", "') OR 1=1--", '"; DROP TABLE things; --'):
        assert ids(conn, Filter("custom_attributes.city", "eq", value)) == []
        assert ids(conn, Filter("name", "contains", value)) == []
    assert ids(conn, search='" OR name : *') == []
    assert len(ids(conn)) == len(ROWS)


def test_operator_outside_the_kind_is_refused(conn: apsw.Connection) -> None:
    with pytest.raises(KeyError):
        fetch(conn, TABLE, ListQuery(filters=(Filter("id", "regex", "."),)))
    with pytest.raises(ValidationError, match="'regex' does not apply to id"):
        check_query(TABLE, ListQuery(filters=(Filter("id", "regex", "."),)))
    with pytest.raises(ValidationError, match="'contains_any'"):
        check_query(TABLE, ListQuery(filters=(Filter("custom_attributes.a", "contains_any", 1),)))


def test_check_query_accepts_what_the_engine_offers() -> None:
    for order_by in (
        "name",
        "created_date",
        "id",
        "custom_attributes.age",
        "custom_attributes.x-y",
    ):
        check_query(TABLE, ListQuery(order_by=order_by))
    with pytest.raises(ValidationError, match="order_by: cannot sort by 'tags'"):
        check_query(TABLE, ListQuery(order_by="tags"))


# -- api.listing.parse with JSON columns ----------------------------------------------------
LISTABLE = Listable("things", TABLE.kinds(), json_columns=("custom_attributes",), table=TABLE)
CODEC = CursorCodec(b"k" * 32)


def parsed(**params: str) -> ListQuery:
    query, extras = parse(MultiDict(params), LISTABLE, CODEC)
    assert extras == {}
    return query


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("custom_attributes.age.gte", "30", Filter("custom_attributes.age", "gte", 30)),
        ("custom_attributes.age.lt", "29.5", Filter("custom_attributes.age", "lt", 29.5)),
        ("custom_attributes.age.lte", "1e3", Filter("custom_attributes.age", "lte", 1000.0)),
        ("custom_attributes.age", "30", Filter("custom_attributes.age", "eq", (30, "30"))),
        (
            "custom_attributes.code",
            "01234",
            Filter("custom_attributes.code", "eq", (1234, "01234")),
        ),
        ("custom_attributes.vip", "true", Filter("custom_attributes.vip", "eq", (1, "true"))),
        ("custom_attributes.city", "Oslo", Filter("custom_attributes.city", "eq", "Oslo")),
        ("custom_attributes.city.sw", "30", Filter("custom_attributes.city", "sw", "30")),
        ("custom_attributes.city.contains", "x", Filter("custom_attributes.city", "contains", "x")),
        ("custom_attributes.city.regex", "^O", Filter("custom_attributes.city", "regex", "^O")),
        (
            "custom_attributes.since.gte",
            "2020-01-01",
            Filter("custom_attributes.since", "gte", "2020-01-01"),
        ),
        ("custom_attributes.n", "1_000", Filter("custom_attributes.n", "eq", "1_000")),
        ("custom_attributes.n", "nan", Filter("custom_attributes.n", "eq", "nan")),
    ],
)
def test_parse_custom_attribute_filters(key: str, raw: str, expected: Filter) -> None:
    assert parsed(**{key: raw}).filters == (expected,)


def test_parse_huge_integer_becomes_a_float_not_an_overflow(conn: apsw.Connection) -> None:
    (item,) = parsed(**{"custom_attributes.age.gte": "1" + "0" * 30}).filters
    assert isinstance(item.value, float)
    assert ids(conn, item) == []


@pytest.mark.parametrize(
    "key",
    [
        "custom_attributes.a') OR 1=1--",
        "custom_attributes.age.contains_any",
        "custom_attributes.age.bogus",
        "custom_attributes.a.b.gte",
        "custom_attributes.",
        "custom_attributes",
        "custom_attributes_age",
    ],
)
def test_parse_refuses_bad_custom_attribute_keys(key: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parsed(**{key: "1"})
    assert caught.value.field == key


def test_parse_order_by_custom_attribute_and_bad_regex() -> None:
    assert parsed(order_by="custom_attributes.age", desc="").order_by == "custom_attributes.age"
    with pytest.raises(ValidationError, match="custom_attributes.city.regex"):
        parsed(**{"custom_attributes.city.regex": "("})


def test_parsed_query_runs_end_to_end(conn: apsw.Connection) -> None:
    query = parsed(**{"custom_attributes.age.gte": "30", "order_by": "custom_attributes.age"})
    check_query(TABLE, query)
    assert [row["id"] for row in fetch(conn, TABLE, query).rows] == ["r1", "r6", "r2"]
    query = parsed(**{"custom_attributes.code": "01234"})
    assert [row["id"] for row in fetch(conn, TABLE, query).rows] == ["r1"]
