"""The shared list engine over HTTP, exercised through GET /v2/orgs as staff.

Every case asserts on the parsed body; refusals name the parameter at fault and are never
a 500. Each site costs a sign-in, so a table of cases shares one site and reports every
case that went wrong at once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from edge.app import Site
from edge.kernel import clock
from edge.kernel.errors import ValidationError
from edge.kernel.listing import CursorCodec, ListQuery
from edge.kernel.principal import Principal
from storage import staff
from tests.conftest import Api

Params = dict[str, str] | Sequence[tuple[str, str]]
SetNow = Callable[[datetime], None]
BASE = datetime(2025, 11, 20, 12, 0, tzinfo=UTC)
NOT_A_KEY = "last_evaluated_key: is not a continuation key of this list"
# name -> body; created one minute apart in this order.
CATALOGUE: dict[str, dict[str, Any]] = {
    "acme": {
        "name": "Acme Widgets",
        "alias": "acme-w",
        "description": "Anvils and rockets",
        "tags": ["red", "blue"],
    },
    "banana": {"name": "banana Republic", "description": "rival of acme", "tags": ["red"]},
    "cherry": {
        "name": "Cherry Co",
        "alias": "initrode-alias",
        "tags": ["blue", "green"],
        "is_active": False,
    },
    "uber": {"name": "Über Org", "is_delete_protected": True},
    "delta": {"name": "delta", "tags": ["green"]},
}
ALL = ("acme", "banana", "cherry", "uber", "delta")
ACTIVE = ("acme", "banana", "uber", "delta")


@pytest.fixture
def set_now(monkeypatch: pytest.MonkeyPatch) -> SetNow:
    """Freeze the service clock at a moment, so created dates are exact."""

    def freeze(moment: datetime) -> None:
        monkeypatch.setattr(clock, "now", lambda: moment)

    return freeze


@pytest.fixture
async def catalogue(api: Api, staff_token: str, set_now: SetNow) -> dict[str, str]:
    """The CATALOGUE orgs, one minute apart; returns name -> org ID."""
    made: dict[str, str] = {}
    for minute, (key, body) in enumerate(CATALOGUE.items()):
        set_now(BASE + timedelta(minutes=minute))
        made[key] = await api.create_org(staff_token, **body)
    return made


@pytest.fixture
async def seven(api: Api, staff_token: str, set_now: SetNow) -> list[str]:
    """Seven orgs created one second apart (named Org 6 .. Org 0): default order is creation."""
    made = []
    for second in range(7):
        set_now(BASE + timedelta(seconds=second))
        made.append(await api.create_org(staff_token, name=f"Org {6 - second}"))
    return made


def staff_id(site: Site) -> str:
    return str(site.services.db.read(staff.first)["id"])


async def get(api: Api, token: str, params: Params = ()) -> tuple[int, Any]:
    return await api.call("GET", "/v2/orgs", token, params=params)


async def listed(api: Api, token: str, params: Params = ()) -> list[str]:
    status, body = await get(api, token, params)
    assert status == 200, (params, body)
    assert set(body) <= {"orgs", "last_evaluated_key"}, body
    return [org["id"] for org in body["orgs"]]


async def refused(api: Api, token: str, params: Params) -> str:
    status, body = await get(api, token, params)
    assert status == 400, (params, body)
    assert set(body) == {"message"}, body
    return str(body["message"])


async def wrong_lists(
    api: Api, token: str, made: dict[str, str], table: Sequence[tuple[Params, Sequence[str]]]
) -> list[str]:
    """Run each (params, expected names) case; describe every case whose list differs."""
    names = {org_id: name for name, org_id in made.items()}
    wrong = []
    for params, expected in table:
        got = [names.get(i, i) for i in await listed(api, token, params)]
        if got != list(expected):
            wrong.append(f"{params}: got {got}, expected {list(expected)}")
    return wrong


async def wrong_refusals(api: Api, token: str, table: Sequence[tuple[Params, str]]) -> list[str]:
    """Run each (params, message prefix) case; describe every case refused otherwise."""
    wrong = []
    for params, prefix in table:
        status, body = await get(api, token, params)
        if status != 400 or set(body) != {"message"} or not body["message"].startswith(prefix):
            wrong.append(f"{params}: {status} {body}, expected 400 '{prefix}...'")
    return wrong


async def walk(api: Api, token: str, params: dict[str, str]) -> list[str]:
    """Follow last_evaluated_key to the end; checks the key's shape on the way."""
    seen: list[str] = []
    key: dict[str, Any] | None = None
    for _ in range(50):
        query = {**params, **({"last_evaluated_key": json.dumps(key)} if key else {})}
        status, body = await get(api, token, query)
        assert status == 200, body
        seen.extend(org["id"] for org in body["orgs"])
        key = body.get("last_evaluated_key")
        if key is None:
            return seen
        assert set(key) == {"id", "v", "sig"} and key["id"] == seen[-1]
    raise AssertionError("paging never ended")


def pick(made: dict[str, str], *names: str) -> list[str]:
    return [made[name] for name in names]


# -- limit --------------------------------------------------------------------------------
async def test_limit_defaults_to_100(api: Api, staff_token: str) -> None:
    made = await asyncio.gather(*(api.create_org(staff_token, name=f"O{i}") for i in range(101)))
    status, first = await get(api, staff_token)
    assert status == 200 and len(first["orgs"]) == 100 and "last_evaluated_key" in first
    params = {"last_evaluated_key": json.dumps(first["last_evaluated_key"])}
    status, second = await get(api, staff_token, params)
    assert status == 200 and set(second) == {"orgs"} and len(second["orgs"]) == 1
    assert sorted(o["id"] for o in first["orgs"] + second["orgs"]) == sorted(made)


async def test_limit_out_of_range_or_not_a_number(api: Api, staff_token: str) -> None:
    values = ["0", "1001", "-1", "x", "", "1.5", "10 0", "1e2"]
    table = [({"limit": value}, "limit: must be") for value in values]
    assert await wrong_refusals(api, staff_token, table) == []


async def test_limit_within_range(api: Api, staff_token: str, seven: list[str]) -> None:
    for value, rows in (("1", 1), ("3", 3), ("1000", 7), (" 2 ", 2), ("7", 7), ("6", 6)):
        status, body = await get(api, staff_token, {"limit": value})
        assert status == 200 and [o["id"] for o in body["orgs"]] == seven[:rows], value
        assert ("last_evaluated_key" in body) == (rows < 7), value


# -- continuation keys ------------------------------------------------------------------------
@pytest.mark.parametrize("desc", [False, True])
async def test_walking_pages_returns_each_org_once_in_order(
    api: Api, staff_token: str, seven: list[str], desc: bool
) -> None:
    flag = {"desc": "true"} if desc else {}
    for limit in ("1", "2", "3", "6", "7", "100"):
        walked = await walk(api, staff_token, {"limit": limit, **flag})
        assert walked == (seven[::-1] if desc else seven), limit


@pytest.mark.parametrize("desc", [False, True])
async def test_walking_by_name(
    api: Api, staff_token: str, catalogue: dict[str, str], desc: bool
) -> None:
    expected = pick(catalogue, "acme", "banana", "cherry", "delta", "uber")
    params = {"limit": "2", "order_by": "name", **({"desc": ""} if desc else {})}
    assert await walk(api, staff_token, params) == (expected[::-1] if desc else expected)


async def test_full_last_page_carries_no_key(api: Api, staff_token: str, seven: list[str]) -> None:
    await api.create_org(staff_token, name="Eighth")  # 8 orgs, pages of 4: exactly two
    status, first = await get(api, staff_token, {"limit": "4"})
    assert status == 200 and len(first["orgs"]) == 4
    key = first["last_evaluated_key"]
    assert key["id"] == seven[3] and key["v"] == first["orgs"][-1]["created_date"]
    params = {"limit": "4", "last_evaluated_key": json.dumps(key)}
    status, second = await get(api, staff_token, params)
    assert status == 200 and set(second) == {"orgs"} and len(second["orgs"]) == 4


async def test_empty_key_means_first_page(api: Api, staff_token: str, seven: list[str]) -> None:
    assert await listed(api, staff_token, {"last_evaluated_key": ""}) == seven


async def first_key(api: Api, token: str, params: dict[str, str]) -> dict[str, Any]:
    status, body = await get(api, token, {"limit": "2", **params})
    assert status == 200, body
    return dict(body["last_evaluated_key"])


def _other_sig(sig: str) -> str:
    return sig[:-2] + ("AA" if sig[-2:] != "AA" else "BB")


TAMPERINGS: dict[str, Callable[[dict[str, Any], list[str]], Any]] = {
    "id": lambda k, ids: {**k, "id": ids[5]},
    "v": lambda k, ids: {**k, "v": "2000-01-01T00:00:00.000000Z"},
    "v-null": lambda k, ids: {**k, "v": None},
    "v-obj": lambda k, ids: {**k, "v": {"x": 1}},
    "sig": lambda k, ids: {**k, "sig": _other_sig(k["sig"])},
    "sig-empty": lambda k, ids: {**k, "sig": ""},
    "sig-unicode": lambda k, ids: {**k, "sig": "é" * 24},
    "sig-int": lambda k, ids: {**k, "sig": 7},
    "no-sig": lambda k, ids: {"id": k["id"], "v": k["v"]},
    "extra": lambda k, ids: {**k, "extra": 1},
}


async def test_tampered_key_is_refused(api: Api, staff_token: str, seven: list[str]) -> None:
    key = await first_key(api, staff_token, {})
    assert await listed(api, staff_token, {"last_evaluated_key": json.dumps(key)}) == seven[2:]
    table = [
        ({"limit": "2", "last_evaluated_key": json.dumps(tamper(key, seven))}, NOT_A_KEY)
        for tamper in TAMPERINGS.values()
    ]
    assert await wrong_refusals(api, staff_token, table) == []


async def test_key_from_another_order_is_refused(
    api: Api, staff_token: str, seven: list[str]
) -> None:
    pairs: list[tuple[dict[str, str], dict[str, str]]] = [
        ({"order_by": "name"}, {}),
        ({}, {"order_by": "name"}),
        ({"desc": "true"}, {}),
        ({}, {"desc": "1"}),
        ({"order_by": "name", "desc": ""}, {"order_by": "name"}),
        ({"order_by": "created_date"}, {"order_by": "last_updated_date"}),
    ]
    table = []
    for made_with, used_with in pairs:
        key = json.dumps(await first_key(api, staff_token, made_with))
        table.append(({"limit": "2", "last_evaluated_key": key, **used_with}, NOT_A_KEY))
    assert await wrong_refusals(api, staff_token, table) == []


async def test_key_survives_a_change_of_filter_and_limit(
    api: Api, staff_token: str, seven: list[str]
) -> None:
    """A key is a position in an order, not a snapshot: any limit or filter may follow it."""
    key = await first_key(api, staff_token, {})
    params = {"limit": "3", "last_evaluated_key": json.dumps(key), "name_regex": "[0-3]$"}
    assert await listed(api, staff_token, params) == [seven[3], seven[4], seven[5]]


async def test_key_that_is_not_json_or_not_a_key(api: Api, staff_token: str) -> None:
    not_json = ["{", "not json", "{'id': 1}", "[" * 2000]
    wrong_shape = ["[]", "1", "null", '"k"', "{}", '{"id": 1, "v": "x", "sig": "s"}']
    table = [
        *(({"last_evaluated_key": t}, "last_evaluated_key: must be valid JSON") for t in not_json),
        *(({"last_evaluated_key": t}, NOT_A_KEY) for t in wrong_shape),
    ]
    assert await wrong_refusals(api, staff_token, table) == []


def test_codec_binds_keys_to_resource_order_and_secret() -> None:
    codec, query = CursorCodec(b"s" * 32), ListQuery(order_by="name")
    key = json.dumps(codec.encode("orgs", query, ("acme", "ID1")))
    assert codec.decode("orgs", query, key) == ("acme", "ID1")
    for resource, other, secret in (
        ("users", query, b"s" * 32),
        ("orgs", ListQuery(order_by="name", desc=True), b"s" * 32),
        ("orgs", ListQuery(order_by="created_date"), b"s" * 32),
        ("orgs", query, b"t" * 32),
    ):
        with pytest.raises(ValidationError, match="last_evaluated_key"):
            CursorCodec(secret).decode(resource, other, key)


# -- page numbers ---------------------------------------------------------------------------
@pytest.mark.parametrize("desc", [False, True])
async def test_page_numbers_give_the_same_slices(
    api: Api, staff_token: str, seven: list[str], desc: bool
) -> None:
    order = seven[::-1] if desc else seven
    flag = {"desc": "true"} if desc else {}
    pages = [
        await listed(api, staff_token, {"limit": "3", "page": str(n), **flag}) for n in (1, 2, 3)
    ]
    assert pages == [order[0:3], order[3:6], order[6:7]]
    assert await listed(api, staff_token, {"limit": "3", "page": "4", **flag}) == []
    assert await listed(api, staff_token, {"page": "1", **flag}) == order


async def test_bad_page_number_and_page_with_key(
    api: Api, staff_token: str, seven: list[str]
) -> None:
    table: list[tuple[Params, str]] = [
        ({"page": value}, "page: must be") for value in ("0", "-1", "x", "1.0", "1000001")
    ]
    key = json.dumps(await first_key(api, staff_token, {}))
    table.append(
        ({"page": "2", "last_evaluated_key": key}, "page and last_evaluated_key cannot be used")
    )
    assert await wrong_refusals(api, staff_token, table) == []


# -- counts ---------------------------------------------------------------------------------
COUNTS: list[tuple[dict[str, str], dict[str, int]]] = [
    ({"object_count": ""}, {"object_count": 7}),
    ({"object_count": "true"}, {"object_count": 7}),
    ({"object_count": "1"}, {"object_count": 7}),
    ({"page_count": ""}, {"page_count": 1}),
    ({"page_count": "true", "limit": "3"}, {"page_count": 3}),
    ({"page_count": "1", "limit": "7"}, {"page_count": 1}),
    ({"object_count": "", "page_count": "", "limit": "2"}, {"object_count": 7, "page_count": 4}),
    ({"object_count": "", "name_regex": "[0-2]$"}, {"object_count": 3}),
    ({"object_count": "", "page_count": "", "name": "none"}, {"object_count": 0, "page_count": 0}),
    ({"object_count": "", "page_count": "false"}, {"object_count": 7}),
    ({"page_count": "", "object_count": "0", "limit": "5"}, {"page_count": 2}),
]


async def test_counts_only(api: Api, staff_token: str, seven: list[str]) -> None:
    wrong = []
    for params, expected in COUNTS:
        got = await get(api, staff_token, params)
        if got != (200, expected):
            wrong.append(f"{params}: got {got}, expected {expected}")
    assert wrong == []


async def test_counts_turned_off_give_the_list(
    api: Api, staff_token: str, seven: list[str]
) -> None:
    params = {"object_count": "false", "page_count": "0", "limit": "2"}
    status, body = await get(api, staff_token, params)
    assert status == 200 and set(body) == {"orgs", "last_evaluated_key"}
    assert [o["id"] for o in body["orgs"]] == seven[:2]


async def test_bad_boolean_flags(api: Api, staff_token: str) -> None:
    table = [
        ({param: value}, f"{param}: must be true or false")
        for param in ("object_count", "page_count", "desc")
        for value in ("maybe", "2", "tru")
    ]
    assert await wrong_refusals(api, staff_token, table) == []


# -- filters --------------------------------------------------------------------------------
async def test_created_by_and_last_updated_by(
    api: Api, staff_token: str, site: Site, catalogue: dict[str, str]
) -> None:
    orgs = site.services.orgs
    other = await orgs.create(Principal("staff", "OtherStaffId0001", None), {"name": "Other"})
    await orgs.patch(Principal("staff", "Patcher000000001", None), catalogue["acme"], {})
    made = {**catalogue, "other": other}
    me = staff_id(site)
    table: list[tuple[Params, Sequence[str]]] = [
        ({"created_by": "OtherStaffId0001"}, ["other"]),
        ({"created_by": me}, ALL),
        ({"last_updated_by": "Patcher000000001"}, ["acme"]),
        ({"created_by": "Patcher000000001"}, []),
        ({"last_updated_by": me}, ["banana", "cherry", "uber", "delta"]),
        ({"last_updated_by": "OtherStaffId0001"}, ["other"]),
        ({"created_by": me, "last_updated_by": me}, ["banana", "cherry", "uber", "delta"]),
        ({"created_by": me.lower()}, []),
    ]
    assert await wrong_lists(api, staff_token, made, table) == []
    status, body = await api.call("GET", f"/v2/orgs/{catalogue['acme']}", staff_token)
    assert (body["org"]["created_by"], body["org"]["last_updated_by"]) == (me, "Patcher000000001")


@pytest.fixture
async def around_a_day(api: Api, staff_token: str, set_now: SetNow) -> dict[str, str]:
    """Orgs at the last instant before 2025-11-22, its first and last instants, the next day."""
    moments = {
        "before": datetime(2025, 11, 21, 23, 59, 59, 999999, tzinfo=UTC),
        "first": datetime(2025, 11, 22, 0, 0, 0, tzinfo=UTC),
        "last": datetime(2025, 11, 22, 23, 59, 59, 999999, tzinfo=UTC),
        "after": datetime(2025, 11, 23, 0, 0, 0, tzinfo=UTC),
    }
    made = {}
    for name, moment in moments.items():
        set_now(moment)
        made[name] = await api.create_org(staff_token, name=f"At {name}")
    return made


DATES: list[tuple[Params, Sequence[str]]] = [
    ({"created_date": "2025-11-22"}, ["first", "last"]),
    ({"created_date_gte": "2025-11-22"}, ["first", "last", "after"]),
    ({"created_date.gte": "2025-11-22"}, ["first", "last", "after"]),
    ({"created_date_lte": "2025-11-22"}, ["before", "first", "last"]),
    ({"created_date.lte": "2025-11-22"}, ["before", "first", "last"]),
    ({"created_date_gt": "2025-11-22"}, ["after"]),
    ({"created_date.gt": "2025-11-21"}, ["first", "last", "after"]),
    ({"created_date.lt": "2025-11-22"}, ["before"]),
    ({"created_date_lt": "2025-11-23"}, ["before", "first", "last"]),
    ({"created_date": "2025-11-22T00:00:00Z"}, ["first"]),
    ({"created_date": "2025-11-22T00:00:00.000000Z"}, ["first"]),
    ({"created_date": "2025-11-22T01:00:00+01:00"}, ["first"]),
    ({"created_date.gte": "2025-11-22T01:00:00+01:00"}, ["first", "last", "after"]),
    ({"created_date.gt": "2025-11-22T00:00:00Z"}, ["last", "after"]),
    ({"created_date.lte": "2025-11-22T00:00:00.000001Z"}, ["before", "first"]),
    ({"created_date_gte": "2025-11-22", "created_date_lt": "2025-11-23"}, ["first", "last"]),
    ({"created_date": "2025-11-24"}, []),
    ({"last_updated_date.gte": "2025-11-22T23:00:00"}, ["last", "after"]),
    ({"last_updated_date": "2025-11-21"}, ["before"]),
]


async def test_date_filters(api: Api, staff_token: str, around_a_day: dict[str, str]) -> None:
    assert await wrong_lists(api, staff_token, around_a_day, DATES) == []


async def test_bad_dates(api: Api, staff_token: str) -> None:
    cases = [
        ("created_date", "yesterday"),
        ("created_date.gte", "2025-13-01"),
        ("created_date_lte", ""),
        ("created_date", "0001-01-01T00:00:00+01:00"),
        ("last_updated_date_gt", "2025-11-22T25:00"),
    ]
    table = [({k: v}, f"{k}: must be an ISO 8601 date or datetime") for k, v in cases]
    assert await wrong_refusals(api, staff_token, table) == []
    # The last representable day is a valid date: nothing was created then.
    status, body = await api.call(
        "GET", "/v2/orgs", staff_token, params={"created_date": "9999-12-31"}
    )
    assert (status, body) == (200, {"orgs": []})


TAGS: list[tuple[Params, Sequence[str]]] = [
    ({"tags": "red"}, ["banana"]),
    ({"tags": "red,blue"}, ["acme"]),
    ({"tags": "blue, red"}, ["acme"]),
    ({"tags": "red,blue,green"}, []),
    ({"tags": "RED"}, []),
    ({"tags_contains": "red"}, ["acme", "banana"]),
    ({"tags.contains": "red"}, ["acme", "banana"]),
    ({"tags.contains": "blue,green"}, ["cherry"]),
    ({"tags_contains": "blue,red"}, ["acme"]),
    ({"tags_contains": "red,red"}, ["acme", "banana"]),
    ({"tags_contains_any": "red,green"}, ["acme", "banana", "cherry", "delta"]),
    ({"tags.contains_any": "green"}, ["cherry", "delta"]),
    ({"tags_contains_any": "purple"}, []),
]


async def test_tag_filters(api: Api, staff_token: str, catalogue: dict[str, str]) -> None:
    assert await wrong_lists(api, staff_token, catalogue, TAGS) == []


TEXT: list[tuple[Params, Sequence[str]]] = [
    ({"name": "acme widgets"}, ["acme"]),
    ({"name": "ACME WIDGETS"}, ["acme"]),
    ({"name": "Acme"}, []),
    ({"name": "über org"}, ["uber"]),
    ({"name": "ÜBER ORG"}, ["uber"]),
    ({"name": "uber org"}, []),
    ({"name_regex": "^[A-C]"}, ["acme", "cherry"]),
    ({"name.regex": "an+a"}, ["banana"]),
    ({"name_regex": "(?i)^b"}, ["banana"]),
    ({"name_sw": "ACM"}, ["acme"]),
    ({"name.sw": "über"}, ["uber"]),
    ({"name.contains": "ORG"}, ["uber"]),
    ({"alias": "ACME-W"}, ["acme"]),
    ({"description.contains": "acme"}, ["banana"]),
    ({"description": ""}, ["cherry", "uber", "delta"]),
    ({"default_locale": "en-us"}, ALL),
    ({"mfa_required": "true"}, []),
    ({"mfa_required": "false"}, ALL),
]


async def test_text_filters(api: Api, staff_token: str, catalogue: dict[str, str]) -> None:
    assert await wrong_lists(api, staff_token, catalogue, TEXT) == []


async def test_bad_regex(api: Api, staff_token: str) -> None:
    table = [
        ({param: pattern}, f"{param}: ")
        for param in ("name_regex", "name.regex", "description_regex")
        for pattern in ("(", "[a-", "*x", "x" * 257)
    ]
    assert await wrong_refusals(api, staff_token, table) == []


BOOLEANS: list[tuple[Params, Sequence[str]]] = [
    ({"is_active": "false"}, ["cherry"]),
    ({"is_active": "0"}, ["cherry"]),
    ({"is_active": "FALSE"}, ["cherry"]),
    ({"is_active": "true"}, ACTIVE),
    ({"is_active": "1"}, ACTIVE),
    ({"is_active": ""}, ACTIVE),
    ({"is_delete_protected": "true"}, ["uber"]),
    ({"is_delete_protected": ""}, ["uber"]),
    ({"is_delete_protected": "0"}, ["acme", "banana", "cherry", "delta"]),
    ({"is_delete_protected": "1", "is_active": "0"}, []),
]


async def test_boolean_filters(api: Api, staff_token: str, catalogue: dict[str, str]) -> None:
    assert await wrong_lists(api, staff_token, catalogue, BOOLEANS) == []


async def test_bad_boolean_filter(api: Api, staff_token: str) -> None:
    table = [
        ({param: value}, f"{param}: must be true or false")
        for param in ("is_active", "is_delete_protected", "mfa_required")
        for value in ("maybe", "2", "yes please")
    ]
    assert await wrong_refusals(api, staff_token, table) == []


async def test_operator_that_does_not_apply(api: Api, staff_token: str) -> None:
    table: list[tuple[Params, str]] = [
        (
            {"created_by_contains": "x"},
            "created_by_contains: 'contains' does not apply to created_by",
        ),
        ({"is_active.gte": "1"}, "is_active.gte: 'gte' does not apply to is_active"),
        ({"tags_regex": "x"}, "tags_regex: 'regex' does not apply to tags"),
        ({"name_gte": "a"}, "name_gte: 'gte' does not apply to name"),
        ({"created_date.contains": "2025"}, "created_date.contains: 'contains' does not apply"),
        ({"id_sw": "a"}, "id_sw: 'sw' does not apply to id"),
    ]
    assert await wrong_refusals(api, staff_token, table) == []


# -- search --------------------------------------------------------------------------------
SEARCHES: list[tuple[Params, Sequence[str]]] = [
    ({"search": "acm"}, ["acme", "banana"]),
    ({"search": "ACME"}, ["acme", "banana"]),
    ({"search": "anv"}, ["acme"]),
    ({"search": "initro"}, ["cherry"]),
    ({"search": "gree"}, ["cherry", "delta"]),
    ({"search": "acme rival"}, ["banana"]),
    ({"search": "uber"}, ["uber"]),
    ({"search": "zzz"}, []),
    ({"search": "acm", "search_fields": "name"}, ["acme"]),
    ({"search": "acm", "search_fields": "description"}, ["banana"]),
    ({"search": "acm", "search_fields": "alias"}, ["acme"]),
    ({"search": "re", "search_fields": "tags"}, ["acme", "banana"]),
    ({"search": "re", "search_fields": "name"}, ["banana"]),
    ({"search": "re", "search_fields": "name, tags"}, ["acme", "banana"]),
    (
        {"search": "acm", "is_active": "true", "search_fields": "description,name"},
        ["acme", "banana"],
    ),
    ({"search": "gree", "is_active": "true"}, ["delta"]),
    ({"search": "  "}, ALL),
    ({"search_fields": "name"}, ALL),
]


async def test_search(api: Api, staff_token: str, catalogue: dict[str, str]) -> None:
    assert await wrong_lists(api, staff_token, catalogue, SEARCHES) == []


async def test_search_follows_patches_and_deletes(
    api: Api, staff_token: str, catalogue: dict[str, str]
) -> None:
    body = {"description": "now sells zeppelins", "tags": ["airship"]}
    status, _ = await api.call("PATCH", f"/v2/orgs/{catalogue['delta']}", staff_token, json=body)
    assert status == 200
    table: list[tuple[Params, Sequence[str]]] = [
        ({"search": "zepp"}, ["delta"]),
        ({"search": "airsh"}, ["delta"]),
        ({"search": "gree"}, ["cherry"]),
    ]
    assert await wrong_lists(api, staff_token, catalogue, table) == []
    status, _ = await api.call("DELETE", f"/v2/orgs/{catalogue['delta']}", staff_token)
    assert status == 200
    assert await listed(api, staff_token, {"search": "zepp"}) == []


async def test_unknown_search_field(api: Api, staff_token: str) -> None:
    table = [
        ({"search": "a", "search_fields": fields}, "search_fields: '")
        for fields in ("bogus", "name,bogus", "id", "created_by", "name}")
    ]
    assert await wrong_refusals(api, staff_token, table) == []


# -- ordering -------------------------------------------------------------------------------
ORDERS: list[tuple[Params, Sequence[str]]] = [
    ({"order_by": "name"}, ["acme", "banana", "cherry", "delta", "uber"]),
    ({"order_by": "name", "desc": "true"}, ["uber", "delta", "cherry", "banana", "acme"]),
    ({"order_by": "created_date"}, ALL),
    ({"desc": ""}, ALL[::-1]),
    ({"order_by": "created_date", "desc": "false"}, ALL),
    ({"order_by": " name "}, ["acme", "banana", "cherry", "delta", "uber"]),
    ({"order_by": "name", "name_regex": "^[a-d]"}, ["banana", "delta"]),
]


async def test_order_by(api: Api, staff_token: str, catalogue: dict[str, str]) -> None:
    assert await wrong_lists(api, staff_token, catalogue, ORDERS) == []


async def test_order_by_a_flag_breaks_ties_on_id(
    api: Api, staff_token: str, catalogue: dict[str, str]
) -> None:
    active = sorted(pick(catalogue, *ACTIVE), reverse=True)
    params = {"order_by": "is_active", "desc": "1"}
    assert await listed(api, staff_token, params) == [*active, catalogue["cherry"]]


async def test_unknown_order_by(api: Api, staff_token: str) -> None:
    values = ("bogus", "tags", "custom_attributes.x", "name.gte", "settings", "name_folded")
    table = [({"order_by": v}, f"order_by: cannot sort by '{v}'") for v in values]
    table.append(({"order_by": " "}, "order_by: must name a field to sort by"))
    assert await wrong_refusals(api, staff_token, table) == []


# -- parameters ------------------------------------------------------------------------------
async def test_unknown_parameter_is_named(api: Api, staff_token: str) -> None:
    names = ("colour", "force", "orgs", "custom_attributes.a", "settings", "name_folded", "Limit")
    table = [({n: "1"}, f"{n}: is not a query parameter of this list") for n in names]
    assert await wrong_refusals(api, staff_token, table) == []


async def test_parameter_given_twice(api: Api, staff_token: str) -> None:
    names = ("limit", "name", "tags_contains", "search", "bust_cache", "object_count")
    table = [([(n, "1"), (n, "2")], f"{n}: was given more than once") for n in names]
    assert await wrong_refusals(api, staff_token, table) == []


async def test_bust_cache_is_accepted_and_ignored(
    api: Api, staff_token: str, seven: list[str]
) -> None:
    for value in ("", "true", "1700000000", "anything at all"):
        assert await listed(api, staff_token, {"bust_cache": value}) == seven, value


async def test_list_items_match_get(api: Api, staff_token: str, catalogue: dict[str, str]) -> None:
    status, body = await get(api, staff_token)
    assert status == 200 and set(body) == {"orgs"}
    assert [org["id"] for org in body["orgs"]] == pick(catalogue, *ALL)
    for org in body["orgs"]:
        status, one = await api.call("GET", f"/v2/orgs/{org['id']}", staff_token)
        assert status == 200 and one["org"] == org


async def test_empty_installation_lists_nothing(api: Api, staff_token: str) -> None:
    assert await get(api, staff_token) == (200, {"orgs": []})
    assert await get(api, staff_token, {"object_count": ""}) == (200, {"object_count": 0})


ODD_PARAMS: list[dict[str, str]] = [
    {"limit": "１０"},
    {"limit": "99999999999999999999999"},
    {"page": "99999999999999999999"},
    {"page": "1000000", "limit": "1000"},
    {"last_evaluated_key": '{"id": "x", "v": [1], "sig": "s"}'},
    {"last_evaluated_key": '{"id": "x", "v": 1e999, "sig": "s"}'},
    {"last_evaluated_key": '{"id": "x", "v": NaN, "sig": "s"}'},
    {"last_evaluated_key": '{"id": "x", "v": 1, "sig": "\\u0000"}'},
    {"created_date": "0001-01-01T00:00:00+01:00"},
    {"created_date.gte": "9999-12-31"},
    {"created_date.lt": "0001-01-01"},
    {"name_regex": "(a+)+$"},
    {"name_regex": "\\"},
    {"search": '"*:^-'},
    {"search": "NEAR(a b) OR c*"},
    {"search": "\x00"},
    {"search_fields": ",,,", "search": "a"},
    {"order_by": ""},
    {"order_by": "created_date.gte"},
    {"tags": ",,,"},
    {"id": "x"},
    {"": "x"},
    {"name": "\x00"},
    {"name": "a" * 5000},
    {"custom_attributes.a": "1"},
    {"is_active.gte": "1"},
    {"desc": "maybe"},
    {"tags_contains_any": "a," * 500},
]


async def test_odd_parameters_never_give_a_500(
    api: Api, staff_token: str, seven: list[str]
) -> None:
    for params in ODD_PARAMS:
        status, body = await get(api, staff_token, params)
        assert status in (200, 400), (params, status, body)
        expected = ("message",) if status == 400 else ("orgs", "object_count")
        assert any(k in body for k in expected), (params, body)
