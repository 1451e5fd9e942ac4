"""Organizations: staff-only CRUD, value rules, aliases, deletion protection, and who may call.

Denials sit next to grants: anonymous callers get 401 and org admins 403 on every route.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from edge.app import Site
from edge.kernel.principal import Principal
from storage import staff
from storage.rows import update
from tests.conftest import STAFF_PASSWORD, Api

ADMIN_EMAIL = "boss@acme.test"
ADMIN_PASSWORD = "correct horse battery"
DEFAULTS: dict[str, Any] = {
    "description": "",
    "tags": [],
    "is_active": True,
    "is_delete_protected": False,
    "mfa_required": False,
    "use_legacy_data_and_files_permissions": False,
    "groups_require_delete_permission_to_put_data_by_default": False,
    "device_owners_have_admin_access": False,
    "device_owners_can_tunnel": False,
    "device_creators_are_owners_by_default": False,
    "project_delete_protection_on_by_default": False,
    "group_delete_protection_on_by_default": False,
    "role_delete_protection_on_by_default": False,
    "user_delete_protection_on_by_default": False,
    "device_delete_protection_on_by_default": False,
    "pii_admin_only": False,
    "default_locale": "en-US",
    "reset_token_expire_hours": 24,
    "access_token_expire_hours": 1,
    "refresh_token_expire_hours": 24,
    "session_expire_mins": 5,
    "allowed_login_fields": ["username", "email", "phone_number"],
    "custom_settings": {},
    "ui_config": {},
}
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
TOKEN_RANGES = {
    "reset_token_expire_hours": (1, 168),
    "access_token_expire_hours": (1, 24),
    "refresh_token_expire_hours": (1, 8760),
    "session_expire_mins": (3, 15),
}


def staff_id(site: Site) -> str:
    return str(site.services.db.read(staff.first)["id"])


async def get_org(api: Api, token: str, org_id: str) -> dict[str, Any]:
    status, body = await api.call("GET", f"/v2/orgs/{org_id}", token)
    assert status == 200 and set(body) == {"org"}, body
    return dict(body["org"])


async def patch(api: Api, token: str, org_id: str, body: Any) -> tuple[int, Any]:
    return await api.call("PATCH", f"/v2/orgs/{org_id}", token, json=body)


async def create(api: Api, token: str, body: Any) -> tuple[int, Any]:
    return await api.call("POST", "/v2/orgs", token, json=body)


@pytest.fixture
async def org_admin(api: Api, site: Site) -> tuple[str, str]:
    """An org with alias 'acme' made by staff with a first admin, and that admin's token."""
    org_id = await site.services.orgs.create(
        Principal("staff", staff_id(site), None),
        {"name": "Acme", "alias": "acme"},
        admin={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD},
    )
    return org_id, await api.token(ADMIN_EMAIL, ADMIN_PASSWORD, client_id=org_id)


# -- create and read ------------------------------------------------------------------------
async def test_create_answers_201_with_the_new_id(api: Api, staff_token: str, site: Site) -> None:
    status, body = await create(api, staff_token, {"name": "Acme"})
    assert status == 201 and set(body) == {"org"} and set(body["org"]) == {"id"}
    org_id = body["org"]["id"]
    assert isinstance(org_id, str) and len(org_id) == 16 and org_id.isalnum()
    org = await get_org(api, staff_token, org_id)
    assert org == {
        **DEFAULTS,
        "id": org_id,
        "name": "Acme",
        "default_from_address": org["default_from_address"],
        "max_roles_per_user": org["max_roles_per_user"],
        "created_date": org["created_date"],
        "created_by": staff_id(site),
        "last_updated_date": org["created_date"],
        "last_updated_by": staff_id(site),
    }
    assert TIMESTAMP.match(org["created_date"]) and "alias" not in org


async def test_create_with_every_field_round_trips(api: Api, staff_token: str) -> None:
    body = {
        "name": "  Acme, Inc. R_D-1  ",
        "alias": "  Acme-Labs ",
        "description": "Makes anvils",
        "tags": [" a ", "a", "b", ""],
        "is_active": False,
        "is_delete_protected": True,
        "mfa_required": True,
        "use_legacy_data_and_files_permissions": True,
        "default_locale": "en_gb",
        "default_from_address": "hello@acme.test",
        "reset_token_expire_hours": 168,
        "access_token_expire_hours": 24,
        "refresh_token_expire_hours": 8760,
        "session_expire_mins": 15,
        "allowed_login_fields": ["email", "email"],
        "custom_settings": {"colour": "red", "n": [1, 2]},
        "ui_config": {"theme": "dark"},
        "max_roles_per_user": 50,
    }
    status, reply = await create(api, staff_token, body)
    assert status == 201, reply
    org = await get_org(api, staff_token, reply["org"]["id"])
    expected = {
        **body,
        "name": "Acme, Inc. R_D-1",
        "alias": "acme-labs",
        "tags": ["a", "b"],
        "default_locale": "en-GB",
        "allowed_login_fields": ["email"],
    }
    assert {k: org[k] for k in expected} == expected


async def test_duplicate_names_are_allowed(api: Api, staff_token: str) -> None:
    first = await api.create_org(staff_token, name="Twin")
    second = await api.create_org(staff_token, name="twin")
    assert first != second


# -- patch ----------------------------------------------------------------------------------
async def test_patch_changes_only_what_it_names(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Acme", access_token_expire_hours=3)
    before = await get_org(api, staff_token, org_id)
    body = {"description": "new", "tags": ["x"], "session_expire_mins": 10}
    assert await patch(api, staff_token, org_id, body) == (200, {"message": "Success"})
    after = await get_org(api, staff_token, org_id)
    changed = {k for k in after if after[k] != before[k]} - {"last_updated_date"}
    assert changed == {"description", "tags", "session_expire_mins"}
    assert (after["description"], after["tags"], after["session_expire_mins"]) == ("new", ["x"], 10)
    assert after["access_token_expire_hours"] == 3
    assert after["last_updated_date"] >= before["last_updated_date"]


async def test_patch_with_an_empty_body_changes_nothing(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Acme", mfa_required=True)
    before = await get_org(api, staff_token, org_id)
    assert await patch(api, staff_token, org_id, {}) == (200, {"message": "Success"})
    after = await get_org(api, staff_token, org_id)
    assert {**after, "last_updated_date": None} == {**before, "last_updated_date": None}


async def test_patch_name_and_locale_are_checked(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Acme")
    assert await patch(api, staff_token, org_id, {"name": " Acme 2 "}) == (
        200,
        {"message": "Success"},
    )
    status, body = await patch(api, staff_token, org_id, {"name": "Acme$"})
    assert status == 400 and body["message"].startswith("name: ")
    assert (await patch(api, staff_token, org_id, {"default_locale": "zh_hant_tw"}))[0] == 200
    org = await get_org(api, staff_token, org_id)
    assert (org["name"], org["default_locale"]) == ("Acme 2", "zh-Hant-TW")


# -- delete ---------------------------------------------------------------------------------
async def test_delete_then_gone(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Doomed")
    assert await api.call("DELETE", f"/v2/orgs/{org_id}", staff_token) == (
        200,
        {"message": "Success"},
    )
    for method in ("GET", "DELETE", "PATCH"):
        kwargs = {"json": {}} if method == "PATCH" else {}
        status, body = await api.call(method, f"/v2/orgs/{org_id}", staff_token, **kwargs)
        assert (status, body) == (404, {"message": "Organization not found"}), method
    assert await api.call("GET", "/v2/orgs", staff_token) == (200, {"orgs": []})


async def test_delete_protection(api: Api, staff_token: str) -> None:
    """The rule (refused without force, deleted with it) is tested in
    tests/edge/tenancy/test_orgs.py; here, how `force` is read and the statuses."""
    org_id = await api.create_org(staff_token, name="Kept", is_delete_protected=True)
    for query in ("", "?force=false", "?force=0"):
        status, body = await api.call("DELETE", f"/v2/orgs/{org_id}{query}", staff_token)
        assert status == 409 and "delete protected" in body["message"], query
    status, body = await api.call("DELETE", f"/v2/orgs/{org_id}?force=maybe", staff_token)
    assert status == 400 and body["message"] == "force: must be true or false"
    status, _ = await api.call("DELETE", f"/v2/orgs/{org_id}?force=true", staff_token)
    assert status == 200


async def test_delete_protection_lifted_by_patch_or_empty_force(api: Api, staff_token: str) -> None:
    first = await api.create_org(staff_token, name="One", is_delete_protected=True)
    await patch(api, staff_token, first, {"is_delete_protected": False})
    assert (await api.call("DELETE", f"/v2/orgs/{first}", staff_token))[0] == 200
    second = await api.create_org(staff_token, name="Two", is_delete_protected=True)
    assert (await api.call("DELETE", f"/v2/orgs/{second}?force=", staff_token))[0] == 200


async def test_delete_ends_the_orgs_sessions(
    api: Api, staff_token: str, org_admin: tuple[str, str]
) -> None:
    org_id, token = org_admin
    assert (await api.call("GET", "/v2/orgs", token))[0] == 403
    assert (await api.call("DELETE", f"/v2/orgs/{org_id}", staff_token))[0] == 200
    assert (await api.call("GET", "/v2/orgs", token))[0] == 401
    response = await api.client.post(
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": ADMIN_EMAIL,
            "password": ADMIN_PASSWORD,
            "client_id": "acme",
        },
    )
    assert response.status == 400


# -- suspension ----------------------------------------------------------------------------------
async def sign_in(api: Api) -> tuple[int, Any]:
    form = {"grant_type": "password", "username": ADMIN_EMAIL, "password": ADMIN_PASSWORD}
    return await api.call("POST", "/v2/auth/token", data={**form, "client_id": "acme"})


async def refresh(api: Api, refresh_token: str) -> tuple[int, Any]:
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": "acme"}
    return await api.call("POST", "/v2/auth/token", data=form)


async def users_status(api: Api, token: str) -> int:
    return (await api.call("GET", "/v2/users", token))[0]


async def test_suspension_ends_the_orgs_sessions_and_reactivation_revives_none(
    api: Api, staff_token: str, org_admin: tuple[str, str]
) -> None:
    org_id, token = org_admin
    status, signed = await sign_in(api)
    assert status == 201, signed
    scoped_staff = await api.token(scope=org_id)
    tokens = (token, signed["access_token"])
    assert [await users_status(api, t) for t in tokens] == [200, 200]
    assert (await patch(api, staff_token, org_id, {"is_active": False}))[0] == 200
    assert [await users_status(api, t) for t in tokens] == [401, 401]
    assert (await refresh(api, signed["refresh_token"]))[0] == 400
    assert await sign_in(api) == (403, {"message": "This account is suspended"})
    assert await users_status(api, scoped_staff) == 200  # staff lift suspensions
    assert (await patch(api, staff_token, org_id, {"is_active": True}))[0] == 200
    assert [await users_status(api, t) for t in tokens] == [401, 401]
    assert (await refresh(api, signed["refresh_token"]))[0] == 400
    status, again = await sign_in(api)
    assert status == 201, again
    assert await users_status(api, again["access_token"]) == 200
    status, renewed = await refresh(api, again["refresh_token"])
    assert status == 201 and await users_status(api, renewed["access_token"]) == 200


async def test_a_suspension_written_outside_the_api_ends_the_sessions_too(
    api: Api, site: Site, org_admin: tuple[str, str]
) -> None:
    """The sessions end in the database (a trigger), whoever suspends the org: another
    process, or an operator with the sqlite3 shell."""
    org_id, token = org_admin
    status, signed = await sign_in(api)
    assert status == 201, signed
    await site.services.db.write(lambda c: update(c, "orgs", "id", org_id, {"is_active": 0}))
    assert await users_status(api, token) == 401
    assert (await refresh(api, signed["refresh_token"]))[0] == 400


# -- value rules -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["Acme", "Acme, Inc.", "a_b-c.d", "Ünïcode 42", "हिन्दी संस्था", "x" * 128, "  padded  "],
)
async def test_good_names(api: Api, staff_token: str, name: str) -> None:
    org_id = await api.create_org(staff_token, name=name)
    assert (await get_org(api, staff_token, org_id))["name"] == name.strip()


async def test_bad_names(api: Api, staff_token: str) -> None:
    cases = [
        "Acme$",
        "a/b",
        "a@b",
        "R&D",
        "tab\there",
        "semi;colon",
        "quote'",
        "",
        "   ",
        "x" * 129,
    ]
    for name in cases:
        status, body = await create(api, staff_token, {"name": name})
        assert status == 400 and body["message"].startswith("name: "), (name, body)
    status, body = await create(api, staff_token, {"name": "$"})
    assert body == {
        "message": "name: may contain only letters, digits, spaces, periods, commas, "
        "underscores and hyphens"
    }
    assert await api.call("GET", "/v2/orgs", staff_token) == (200, {"orgs": []})


async def test_text_and_tag_limits(api: Api, staff_token: str) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"description": "d" * 2049}, "description: must be at most 2048 characters"),
        ({"tags": [f"t{i}" for i in range(65)]}, "tags: must have at most 64 tags"),
        ({"tags": ["t" * 129]}, "tags: each tag must be at most 128 characters"),
        ({"default_from_address": "nobody"}, "default_from_address: must be an e-mail address"),
        ({"allowed_login_fields": []}, "allowed_login_fields: must be a non-empty list"),
        ({"allowed_login_fields": ["nickname"]}, "allowed_login_fields: 'nickname' is not one"),
        ({"max_roles_per_user": 0}, "max_roles_per_user: must be between 1 and 10000"),
    ]
    for extra, message in cases:
        status, body = await create(api, staff_token, {"name": "X", **extra})
        assert status == 400 and body["message"].startswith(message), (extra, body)
    ok = {"name": "X", "description": "d" * 2048, "tags": [f"t{i}" for i in range(64)]}
    assert (await create(api, staff_token, ok))[0] == 201


async def test_token_setting_ranges(api: Api, staff_token: str) -> None:
    """Each range and its edges are tested in tests/edge/tenancy/test_settings.py; here, that
    a value out of range is a 400 Status naming the range on create and on patch, an edge
    is kept, and a fraction is a 406 (the body's type, checked before the rule)."""
    org_id = await api.create_org(staff_token, name="Ranges")
    field, (low, high) = "session_expire_mins", TOKEN_RANGES["session_expire_mins"]
    expected = f"{field}: must be between {low} and {high}"
    for status, body in (
        await create(api, staff_token, {"name": "X", field: high + 1}),
        await patch(api, staff_token, org_id, {field: low - 1}),
    ):
        assert (status, body) == (400, {"message": expected})
    assert (await patch(api, staff_token, org_id, {field: float(high)}))[0] == 200
    stored = (await get_org(api, staff_token, org_id))[field]
    assert stored == high and isinstance(stored, int)
    for name, (least, _) in TOKEN_RANGES.items():
        status, body = await patch(api, staff_token, org_id, {name: least + 0.5})
        assert status == 406 and body["message"].startswith(f"{name}: must be of type"), body


@pytest.mark.parametrize(
    ("given", "stored"),
    [("en_gb", "en-GB"), ("EN-us", "en-US"), ("zh_hant_tw", "zh-Hant-TW"), ("es_419", "es-419")],
)
async def test_default_locale_is_normalized(
    api: Api, staff_token: str, given: str, stored: str
) -> None:
    org_id = await api.create_org(staff_token, name="Locale", default_locale=given)
    assert (await get_org(api, staff_token, org_id))["default_locale"] == stored


async def test_bad_default_locale(api: Api, staff_token: str) -> None:
    for value in ("english", "e", "abcd-GB", "en_gb_x_y", "", "12-34"):
        status, body = await create(api, staff_token, {"name": "X", "default_locale": value})
        assert (status, body) == (
            400,
            {"message": "default_locale: must be a locale such as en-US"},
        ), value


# -- schema errors (406) ------------------------------------------------------------------------
SCHEMA_CASES: list[tuple[Any, str]] = [
    ({}, "name: is required"),
    ({"description": "no name"}, "name: is required"),
    ({"name": 5}, "name: must be of type string"),
    ({"name": None}, "name: must be of type string"),
    ({"name": "X", "colour": "red"}, "colour: is not a known field"),
    ({"name": "X", "tags": "a"}, "tags: must be of type array"),
    ({"name": "X", "tags": [1]}, "tags.0: must be of type string"),
    ({"name": "X", "is_active": "yes"}, "is_active: must be of type boolean"),
    ({"name": "X", "access_token_expire_hours": "5"}, "access_token_expire_hours: must be of type"),
    ({"name": "X", "session_expire_mins": True}, "session_expire_mins: must be of type integer"),
    ({"name": "X", "custom_settings": []}, "custom_settings: must be of type object"),
    ({"name": "X", "alias": 7}, "alias: must be of type"),
    ({"name": "X", "id": "mine"}, "id: is not a known field"),
    ({"name": "X", "created_by": "me"}, "created_by: is not a known field"),
]


async def test_create_schema_errors_are_406(api: Api, staff_token: str) -> None:
    for body, message in SCHEMA_CASES:
        status, reply = await create(api, staff_token, body)
        assert status == 406 and reply["message"].startswith(message), (body, reply)
    assert await api.call("GET", "/v2/orgs", staff_token) == (200, {"orgs": []})


async def test_patch_schema_errors_are_406(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Target")
    before = await get_org(api, staff_token, org_id)
    for body, message in SCHEMA_CASES[2:]:
        status, reply = await patch(api, staff_token, org_id, body)
        assert status == 406 and reply["message"].startswith(message), (body, reply)
    assert await get_org(api, staff_token, org_id) == before


# -- aliases ------------------------------------------------------------------------------------
async def test_alias_is_unique_and_case_insensitive(api: Api, staff_token: str) -> None:
    first = await api.create_org(staff_token, name="First", alias="acme")
    for alias in ("acme", "ACME", " Acme "):
        status, body = await create(api, staff_token, {"name": "Second", "alias": alias})
        assert (status, body) == (409, {"message": "alias: 'acme' is already taken"}), alias
    second = await api.create_org(staff_token, name="Second", alias="other")
    status, body = await patch(api, staff_token, second, {"alias": "Acme"})
    assert (status, body) == (409, {"message": "alias: 'acme' is already taken"})
    assert (await get_org(api, staff_token, second))["alias"] == "other"
    assert (await get_org(api, staff_token, first))["alias"] == "acme"
    # The refused patch kept 'other' reserved for its owner.
    status, _ = await create(api, staff_token, {"name": "Third", "alias": "other"})
    assert status == 409
    assert await api.call("GET", "/v2/orgs?object_count", staff_token) == (
        200,
        {"object_count": 2},
    )


async def test_alias_race_has_one_winner(api: Api, staff_token: str) -> None:
    bodies = [{"name": f"Racer {i}", "alias": "race"} for i in range(4)]
    results = await asyncio.gather(*(create(api, staff_token, b) for b in bodies))
    assert sorted(status for status, _ in results) == [201, 409, 409, 409]
    status, body = await api.call("GET", "/v2/orgs", staff_token)
    assert [org.get("alias") for org in body["orgs"]] == ["race"]


async def test_alias_patched_onto_itself(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Acme", alias="acme")
    assert (await patch(api, staff_token, org_id, {"alias": "ACME"}))[0] == 200
    assert (await get_org(api, staff_token, org_id))["alias"] == "acme"


async def test_alias_freed_by_delete(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Acme", alias="acme")
    assert (await api.call("DELETE", f"/v2/orgs/{org_id}", staff_token))[0] == 200
    again = await api.create_org(staff_token, name="Acme again", alias="Acme")
    assert (await get_org(api, staff_token, again))["alias"] == "acme"


@pytest.mark.parametrize("away", [None, "", "acme2"])
async def test_alias_freed_by_patching_it_away(api: Api, staff_token: str, away: Any) -> None:
    org_id = await api.create_org(staff_token, name="Acme", alias="acme")
    assert (await patch(api, staff_token, org_id, {"alias": away}))[0] == 200
    org = await get_org(api, staff_token, org_id)
    assert org.get("alias") == (away or None) and ("alias" in org) == bool(away)
    assert (await create(api, staff_token, {"name": "Taker", "alias": "acme"}))[0] == 201


async def test_bad_aliases(api: Api, staff_token: str) -> None:
    cases = ["a", "-abc", "_abc", "has space", "x" * 64, "dot.ted", "ümlaut", "abcdEFGH12345678"]
    for alias in cases:
        status, body = await create(api, staff_token, {"name": "X", "alias": alias})
        assert status == 400 and body["message"].startswith("alias: "), (alias, body)
    status, body = await create(api, staff_token, {"name": "X", "alias": "abcdEFGH12345678"})
    assert body == {"message": "alias: must not look like an ID"}
    assert await api.call("GET", "/v2/orgs", staff_token) == (200, {"orgs": []})


async def test_good_aliases(api: Api, staff_token: str) -> None:
    for alias in ("ab", "a1", "9lives", "x" * 63, "abcdefgh-1234567", "under_score"):
        org_id = await api.create_org(staff_token, name="X", alias=alias)
        assert (await get_org(api, staff_token, org_id))["alias"] == alias


# -- who may call ---------------------------------------------------------------------------
def routes(org_id: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        ("POST", "/v2/orgs", {"json": {"name": "Sneaky"}}),
        ("GET", "/v2/orgs", {}),
        ("GET", "/v2/orgs?object_count=", {}),
        ("GET", f"/v2/orgs/{org_id}", {}),
        ("PATCH", f"/v2/orgs/{org_id}", {"json": {"name": "Mine now"}}),
        ("DELETE", f"/v2/orgs/{org_id}", {}),
        ("DELETE", f"/v2/orgs/{org_id}?force=true", {}),
        ("GET", "/v2/orgs/unknownOrgId0001", {}),
    ]


async def test_anonymous_gets_401_everywhere(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Acme")
    for method, path, kwargs in routes(org_id):
        for token in (None, "not-a-jwt"):
            status, body = await api.call(method, path, token, **kwargs)
            assert status == 401 and set(body) == {"message"}, (method, path, token, body)
    assert (await get_org(api, staff_token, org_id))["name"] == "Acme"


async def test_org_admin_gets_403_everywhere(
    api: Api, staff_token: str, org_admin: tuple[str, str]
) -> None:
    """Each service's refusal is tested in tests/edge/tenancy/test_orgs.py; here, that it is
    a 403 Status on a route that writes, on one that reads, and before an unknown org's 404."""
    org_id, token = org_admin
    for method, path, kwargs in [
        ("POST", "/v2/orgs", {"json": {"name": "Sneaky"}}),
        ("GET", "/v2/orgs?object_count=", {}),
        ("DELETE", f"/v2/orgs/{org_id}?force=true", {}),
        ("GET", "/v2/orgs/unknownOrgId0001", {}),
    ]:
        status, body = await api.call(method, path, token, **kwargs)
        assert status == 403 and set(body) == {"message"}, (method, path, body)


async def test_org_admin_signs_in_by_id_or_alias(
    api: Api, org_admin: tuple[str, str], site: Site
) -> None:
    org_id, _ = org_admin
    for client_id in (org_id, "acme", "ACME", " acme "):
        assert await api.token(ADMIN_EMAIL.upper(), ADMIN_PASSWORD, client_id=client_id)


async def test_org_token_lifetime_follows_the_org(
    api: Api, staff_token: str, org_admin: tuple[str, str]
) -> None:
    org_id, _ = org_admin
    assert (await patch(api, staff_token, org_id, {"access_token_expire_hours": 3}))[0] == 200
    response = await api.client.post(
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": ADMIN_EMAIL,
            "password": ADMIN_PASSWORD,
            "client_id": org_id,
        },
    )
    body = await response.json()
    assert response.status == 201 and 3 * 3600 - 5 <= body["expires_in"] <= 3 * 3600


async def test_suspended_org_refuses_its_users(
    api: Api, staff_token: str, org_admin: tuple[str, str]
) -> None:
    org_id, _ = org_admin
    assert (await patch(api, staff_token, org_id, {"is_active": False}))[0] == 200
    response = await api.client.post(
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": ADMIN_EMAIL,
            "password": ADMIN_PASSWORD,
            "client_id": org_id,
        },
    )
    assert response.status == 403


async def test_unknown_org_is_404_for_staff(api: Api, staff_token: str) -> None:
    for method, kwargs in (("GET", {}), ("PATCH", {"json": {"name": "X"}}), ("DELETE", {})):
        for org_id in ("unknownOrgId0001", "x", "acme"):
            status, body = await api.call(method, f"/v2/orgs/{org_id}", staff_token, **kwargs)
            assert (status, body) == (404, {"message": "Organization not found"}), (method, org_id)


async def test_patch_of_unknown_org_checks_existence_first(api: Api, staff_token: str) -> None:
    status, body = await patch(api, staff_token, "unknownOrgId0001", {"alias": "fresh"})
    assert status == 404
    assert (await create(api, staff_token, {"name": "X", "alias": "fresh"}))[0] == 201


async def test_staff_scope_sign_in(api: Api, staff_token: str) -> None:
    org_id = await api.create_org(staff_token, name="Scoped")
    scoped = await api.token(scope=org_id)
    assert (await get_org(api, scoped, org_id))["name"] == "Scoped"
    assert (await api.call("GET", "/v2/orgs", scoped))[0] == 200
    for scope in ("unknownOrgId0001", "nope"):
        response = await api.client.post(
            "/v2/auth/token",
            data={
                "grant_type": "password",
                "username": "admin",
                "password": STAFF_PASSWORD,
                "scope": scope,
            },
        )
        body = await response.json()
        assert 400 <= response.status < 500 and "access_token" not in body, scope
