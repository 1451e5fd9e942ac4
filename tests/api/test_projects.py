"""Projects: who may do what (role-by-role tables), defaults, value rules, aliases, deletion
protection, suspension, lists and tenant isolation.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from edge.app import Site
from storage import access as access_store
from storage import projects as project_store
from tests.conftest import Api
from tests.tenants import Tenant
from tests.world import (
    CALLERS,
    PROJECT_ADMIN_ONLY,
    PROJECT_ADMINS,
    PROJECT_CREATORS,
    PROJECT_READERS,
    World,
    new_project,
    table,
)

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
TOKEN_RANGES = {
    "reset_token_expire_hours": (1, 168),
    "access_token_expire_hours": (1, 24),
    "refresh_token_expire_hours": (1, 8760),
    "session_expire_mins": (3, 15),
}


def stored(world: World, project_id: str) -> dict[str, Any] | None:
    return world.site.services.db.read(lambda c: project_store.get(c, project_id))


async def get_project(api: Api, token: str | None, project_id: str) -> dict[str, Any]:
    status, body = await api.call("GET", f"/v2/projects/{project_id}", token)
    assert status == 200 and set(body) == {"project"}, body
    return dict(body["project"])


# -- who may do what ---------------------------------------------------------------------------
@pytest.mark.parametrize(("who", "expected"), table(PROJECT_READERS))
async def test_get_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who)
    status, body = await world.api.call("GET", f"/v2/projects/{world.project_id}", token)
    assert status == expected, body
    if status == 200:
        project = body["project"]
        assert (project["id"], project["name"], project["alias"]) == (
            world.project_id,
            "Apollo",
            "apollo",
        )
        assert ("is_active" in project) is (who in PROJECT_ADMINS)  # admins only
    else:
        assert set(body) == {"message"}


SECOND = {
    **dict.fromkeys(CALLERS, 404),
    "staff": 200,
    "staff_unscoped": 403,
    "org_admin": 200,
    "org_project_perms": 200,
    "device_boss": 200,
    "anonymous": 401,
}


@pytest.mark.parametrize(("who", "expected"), table(SECOND))
async def test_another_project_is_reached_only_through_org_rights(
    world: World, who: str, expected: int
) -> None:
    token = await world.token(who)
    status, _ = await world.api.call("GET", f"/v2/projects/{world.second_project_id}", token)
    assert status == expected


LISTED: dict[str, set[str] | int] = {
    "staff": {"Apollo", "Gemini"},
    "staff_unscoped": 403,
    "org_admin": {"Apollo", "Gemini"},
    "project_admin": {"Apollo"},
    "role_admin": {"Apollo"},
    "org_user_perms": set(),
    "org_group_role_perms": set(),
    "org_project_perms": {"Apollo", "Gemini"},
    "org_device_perms": set(),
    "project_user_perms": set(),
    "project_group_role_perms": set(),
    "project_device_perms": set(),
    "project_reader": {"Apollo"},
    "project_updater": set(),
    "group_admin": set(),
    "group_user_perms": set(),
    "group_editor": set(),
    "group_device_perms": set(),
    "member": set(),
    "holder": set(),
    "owner": set(),
    "plain": set(),
    "gemini_user": set(),
    "device_member": set(),
    "device_loner": set(),
    "device_boss": {"Apollo", "Gemini"},
    "device_plain": set(),
    "other_admin": {"Theirs"},
    "anonymous": 401,
}


@pytest.mark.parametrize(("who", "expected"), table(LISTED))
async def test_list_by_role(world: World, who: str, expected: set[str] | int) -> None:
    token = await world.token(who)
    status, body = await world.api.call("GET", "/v2/projects", token)
    if isinstance(expected, int):
        assert status == expected and set(body) == {"message"}, body
    else:
        assert status == 200 and set(body) == {"projects"}, body
        assert {p["name"] for p in body["projects"]} == expected


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_CREATORS))
async def test_create_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who)
    status, body = await world.api.call("POST", "/v2/projects", token, json={"name": "New"})
    assert status == expected, body
    if status == 201:
        row = stored(world, body["project"]["id"])
        assert row is not None and row["name"] == "New"
        home = world.other if who == "other_admin" else world.tenant
        assert row["org_id"] == home.org_id
    else:
        assert set(body) == {"message"}


UPDATE = {**PROJECT_READERS, "project_updater": 200, "project_reader": 403}


@pytest.mark.parametrize(("who", "expected"), table(UPDATE))
async def test_patch_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who)
    path = f"/v2/projects/{world.project_id}"
    status, body = await world.api.call("PATCH", path, token, json={"description": "changed"})
    assert status == expected, body
    row = stored(world, world.project_id)
    assert row is not None
    assert row["description"] == ("changed" if status == 200 else "")


SUSPEND = {**UPDATE, "project_updater": 403}  # suspending needs an admin or org-level update


@pytest.mark.parametrize(("who", "expected"), table(SUSPEND))
async def test_suspend_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who)
    path = f"/v2/projects/{world.project_id}"
    status, body = await world.api.call("PATCH", path, token, json={"is_active": False})
    assert status == expected, body
    row = stored(world, world.project_id)
    assert row is not None and bool(row["is_active"]) is (status != 200)


DELETE = {**PROJECT_READERS, "project_reader": 403, "project_updater": 403}


@pytest.mark.parametrize(("who", "expected"), table(DELETE))
async def test_delete_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who)
    status, body = await world.api.call("DELETE", f"/v2/projects/{world.project_id}", token)
    assert status == expected, body
    assert (stored(world, world.project_id) is None) is (status == 200)


@pytest.mark.parametrize(("who", "expected"), table(PROJECT_ADMIN_ONLY))  # force: admins only
async def test_forced_delete_by_role(world: World, who: str, expected: int) -> None:
    await world.site.services.db.write(
        lambda c: project_store.patch(c, world.project_id, {"is_delete_protected": 1})
    )
    token = await world.token(who)
    path = f"/v2/projects/{world.project_id}?force=true"
    status, body = await world.api.call("DELETE", path, token)
    assert status == expected, body
    assert (stored(world, world.project_id) is None) is (status == 200)


# -- tenant isolation ---------------------------------------------------------------------------
async def test_another_orgs_project_is_404_for_every_operation(world: World) -> None:
    token = await world.token("org_admin")
    path = f"/v2/projects/{world.other_project_id}"
    for method, kwargs in (("GET", {}), ("PATCH", {"json": {"name": "x"}}), ("DELETE", {})):
        status, body = await world.api.call(method, path, token, **kwargs)
        assert (status, body) == (404, {"message": "Project not found"}), method
    status, body = await world.api.call("GET", "/v2/projects?object_count=true", token)
    assert body == {"object_count": 2}
    status, body = await world.api.call("GET", "/v2/projects?search=theirs", token)
    assert (status, body) == (200, {"projects": []})
    row = stored(world, world.other_project_id)
    assert row is not None and row["name"] == "Theirs"


async def test_other_orgs_ids_never_appear(world: World) -> None:
    for who in ("staff", "org_admin", "org_project_perms"):
        token = await world.token(who)
        status, body = await world.api.call("GET", "/v2/projects", token)
        assert status == 200
        assert world.other_project_id not in {p["id"] for p in body["projects"]}


# -- create and read ----------------------------------------------------------------------------
async def test_create_answers_201_with_the_id_and_defaults_from_the_org(
    site: Site, api: Api, tenant: Tenant, staff_token: str
) -> None:
    org_settings = {
        "use_legacy_data_and_files_permissions": True,
        "access_token_expire_hours": 3,
        "group_delete_protection_on_by_default": True,
        "groups_require_delete_permission_to_put_data_by_default": True,
        "project_delete_protection_on_by_default": True,
        "allowed_login_fields": ["email"],
        "default_locale": "fr-FR",
    }
    path = f"/v2/orgs/{tenant.org_id}"
    assert (await api.call("PATCH", path, staff_token, json=org_settings))[0] == 200
    token = await tenant.admin_token()
    status, body = await api.call("POST", "/v2/projects", token, json={"name": "Apollo"})
    assert status == 201 and set(body) == {"project"} and set(body["project"]) == {"id"}
    project_id = body["project"]["id"]
    assert isinstance(project_id, str) and len(project_id) == 16 and project_id.isalnum()
    project = await get_project(api, token, project_id)
    assert project == {
        "id": project_id,
        "name": "Apollo",
        "description": "",
        "tags": [],
        "is_active": True,
        "is_delete_protected": True,  # the org's project_delete_protection_on_by_default
        "use_legacy_data_and_files_permissions": True,
        "groups_require_delete_permission_to_put_data_by_default": True,
        "group_delete_protection_on_by_default": True,
        "role_delete_protection_on_by_default": False,
        "user_delete_protection_on_by_default": False,
        "device_delete_protection_on_by_default": False,
        "device_owners_have_admin_access": False,
        "device_owners_can_tunnel": False,
        "device_creators_are_owners_by_default": False,
        "pii_admin_only": False,
        "default_locale": "fr-FR",
        "default_from_address": "no-reply@edge.local",
        "reset_token_expire_hours": 24,
        "access_token_expire_hours": 3,
        "refresh_token_expire_hours": 24,
        "session_expire_mins": 5,
        "allowed_login_fields": ["email"],
        "custom_settings": {},
        "ui_config": {},
        "created_date": project["created_date"],
        "created_by": tenant.admin_id,
        "last_updated_date": project["created_date"],
        "last_updated_by": tenant.admin_id,
    }
    assert TIMESTAMP.match(project["created_date"]) and "alias" not in project
    # A copy made at creation: the org changing later does not change the project.
    await api.call("PATCH", path, staff_token, json={"access_token_expire_hours": 9})
    assert (await get_project(api, token, project_id))["access_token_expire_hours"] == 3


async def test_create_with_every_field_round_trips(api: Api, tenant: Tenant) -> None:
    body = {
        "name": "  Apollo 11  ",
        "alias": " Moon-Shot ",
        "description": "Lunar landing",
        "tags": [" a ", "a", "b", ""],
        "is_delete_protected": True,
        "use_legacy_data_and_files_permissions": True,
        "groups_require_delete_permission_to_put_data_by_default": True,
        "group_delete_protection_on_by_default": True,
        "role_delete_protection_on_by_default": True,
        "default_locale": "en_gb",
        "default_from_address": "moon@nasa.test",
        "reset_token_expire_hours": 168,
        "access_token_expire_hours": 24,
        "refresh_token_expire_hours": 8760,
        "session_expire_mins": 15,
        "allowed_login_fields": ["email", "username", "email"],
        "ui_config": {"primary_color": "#000", "use_dark_mode": True},
        "custom_settings": {"n": [1, 2]},
        "pii_admin_only": True,
    }
    token = await tenant.admin_token()
    status, reply = await api.call("POST", "/v2/projects", token, json=body)
    assert status == 201, reply
    project = await get_project(api, token, reply["project"]["id"])
    expected = {
        **body,
        "name": "Apollo 11",
        "alias": "moon-shot",
        "tags": ["a", "b"],
        "default_locale": "en-GB",
        "allowed_login_fields": ["email", "username"],
    }
    assert {k: project[k] for k in expected} == expected


async def test_missing_name_is_406_and_bad_values_are_400_naming_the_field(
    api: Api, tenant: Tenant
) -> None:
    token = await tenant.admin_token()
    status, body = await api.call("POST", "/v2/projects", token, json={})
    assert (status, body) == (406, {"message": "name: is required"})
    status, body = await api.call("POST", "/v2/projects", token, json={"name": 5})
    assert (status, body) == (406, {"message": "name: must be of type string"})
    status, body = await api.call("POST", "/v2/projects", token, json={"name": "x", "owner": 1})
    assert (status, body) == (406, {"message": "owner: is not a known field"})
    cases = {
        "name": "   ",
        "alias": "UPPER CASE!",
        "default_locale": "not a locale",
        "default_from_address": "nobody",
        "allowed_login_fields": ["fingerprint"],
    }
    for name, value in cases.items():
        status, body = await api.call(
            "POST", "/v2/projects", token, json={"name": "Apollo", name: value}
        )
        assert status == 400 and body["message"].startswith(f"{name}: "), (name, body)
    status, body = await api.call(
        "POST", "/v2/projects", token, json={"name": "Apollo", "allowed_login_fields": []}
    )
    assert status == 400 and body["message"].startswith("allowed_login_fields: ")


@pytest.mark.parametrize("setting", sorted(TOKEN_RANGES))
async def test_token_settings_have_ranges(api: Api, tenant: Tenant, setting: str) -> None:
    low, high = TOKEN_RANGES[setting]
    token = await tenant.admin_token()
    for value in (low - 1, high + 1, 0, -5):
        body = {"name": "Apollo", setting: value}
        status, reply = await api.call("POST", "/v2/projects", token, json=body)
        assert (status, reply) == (400, {"message": f"{setting}: must be between {low} and {high}"})
    for value in (low, high):
        body = {"name": f"Apollo {value}", setting: value}
        status, reply = await api.call("POST", "/v2/projects", token, json=body)
        assert status == 201, reply
        project = await get_project(api, token, reply["project"]["id"])
        assert project[setting] == value
        path = f"/v2/projects/{reply['project']['id']}"
        status, reply = await api.call("PATCH", path, token, json={setting: high + 1})
        assert status == 400 and reply["message"].startswith(f"{setting}: ")


# -- names and aliases ------------------------------------------------------------------------
async def test_names_are_unique_in_an_org_without_case(
    site: Site, api: Api, tenant: Tenant, other_tenant: Tenant
) -> None:
    token = await tenant.admin_token()
    first = await api.call("POST", "/v2/projects", token, json={"name": "Apollo"})
    assert first[0] == 201
    status, body = await api.call("POST", "/v2/projects", token, json={"name": "APOLLO"})
    assert status == 409 and body["message"].startswith("name: ")
    second = await new_project(site, tenant, name="Gemini")
    status, _ = await api.call("PATCH", f"/v2/projects/{second}", token, json={"name": "apollo"})
    assert status == 409
    path = f"/v2/projects/{first[1]['project']['id']}"
    assert (await api.call("PATCH", path, token, json={"name": "Apollo"}))[0] == 200
    assert await new_project(site, other_tenant, name="Apollo")  # another org may use the name


async def test_aliases_are_unique_across_orgs_and_projects(
    site: Site, api: Api, tenant: Tenant, other_tenant: Tenant
) -> None:
    token = await tenant.admin_token()
    status, body = await api.call(
        "POST", "/v2/projects", token, json={"name": "A", "alias": "Clinic"}
    )
    assert (status, body) == (409, {"message": "alias: 'clinic' is already taken"})  # the org's
    status, body = await api.call(
        "POST", "/v2/projects", token, json={"name": "A", "alias": "moon"}
    )
    assert status == 201
    first = body["project"]["id"]
    other = other_tenant
    other_token = await other.admin_token()
    status, body = await api.call(
        "POST", "/v2/projects", other_token, json={"name": "B", "alias": "MOON"}
    )
    assert (status, body) == (409, {"message": "alias: 'moon' is already taken"})
    second = await new_project(site, other, name="B")
    path = f"/v2/projects/{second}"
    assert (await api.call("PATCH", path, other_token, json={"alias": "moon"}))[0] == 409
    # Releasing an alias frees it; clearing it with null removes it from the project.
    assert (await api.call("PATCH", f"/v2/projects/{first}", token, json={"alias": None}))[0] == 200
    assert "alias" not in await get_project(api, token, first)
    assert (await api.call("PATCH", path, other_token, json={"alias": "moon"}))[0] == 200
    assert (await get_project(api, other_token, second))["alias"] == "moon"


async def test_deleting_a_project_frees_its_alias(site: Site, api: Api, tenant: Tenant) -> None:
    token = await tenant.admin_token()
    project_id = await new_project(site, tenant, name="A", alias="moon")
    assert (await api.call("DELETE", f"/v2/projects/{project_id}", token))[0] == 200
    status, _ = await api.call("POST", "/v2/projects", token, json={"name": "B", "alias": "moon"})
    assert status == 201


# -- patch ---------------------------------------------------------------------------------------
async def test_patch_changes_only_what_it_names(site: Site, api: Api, tenant: Tenant) -> None:
    project_id = await new_project(site, tenant, name="Apollo", access_token_expire_hours=3)
    token = await tenant.admin_token()
    before = await get_project(api, token, project_id)
    body = {"description": "new", "tags": ["x"], "session_expire_mins": 10}
    path = f"/v2/projects/{project_id}"
    assert await api.call("PATCH", path, token, json=body) == (200, {"message": "Success"})
    after = await get_project(api, token, project_id)
    changed = {k for k in after if after[k] != before[k]} - {"last_updated_date"}
    assert changed == {"description", "tags", "session_expire_mins"}
    assert after["access_token_expire_hours"] == 3
    assert after["last_updated_date"] >= before["last_updated_date"]
    assert await api.call("PATCH", path, token, json={"is_active": "no"}) == (
        406,
        {"message": "is_active: must be of type boolean"},
    )


# -- create_own_access -----------------------------------------------------------------------------
async def test_a_user_creator_gets_admin_access_unless_declined(world: World) -> None:
    token = await world.token("org_project_perms")
    user_id = world.id("org_project_perms")
    made = {}
    for own in (True, False):
        body = {"name": f"Mine {own}", "create_own_access": own}
        status, reply = await world.api.call("POST", "/v2/projects", token, json=body)
        assert status == 201
        made[own] = reply["project"]["id"]
    db = world.site.services.db
    mine = db.read(lambda c: access_store.get(c, made[True], user_id))
    assert mine is not None and mine["id"] == made[True] + user_id[:13] and len(mine["id"]) == 29
    assert (mine["kind"], mine["is_admin"], mine["can_read"], mine["can_update"]) == (
        "project",
        1,
        1,
        1,
    )
    assert db.read(lambda c: access_store.get(c, made[False], user_id)) is None
    status, reply = await world.api.call("GET", f"/v2/projects/{made[True]}", token)
    assert status == 200 and reply["project"]["is_active"] is True  # an admin of it now


async def test_staff_creators_get_no_access_row(world: World) -> None:
    token = await world.token("staff")
    status, reply = await world.api.call("POST", "/v2/projects", token, json={"name": "S"})
    assert status == 201
    rows = world.site.services.db.read(
        lambda c: access_store.grantees_of(c, reply["project"]["id"])
    )
    assert rows == []


# -- deletion --------------------------------------------------------------------------------------
async def test_delete_protection_and_force(world: World) -> None:
    token = await world.token("project_admin")
    path = f"/v2/projects/{world.project_id}"
    assert (await world.api.call("PATCH", path, token, json={"is_delete_protected": True}))[
        0
    ] == 200
    for query in ("", "?force=false", "?permanent=true"):
        status, body = await world.api.call("DELETE", path + query, token)
        assert status == 409 and "delete protected" in body["message"], query
    status, body = await world.api.call("DELETE", path + "?force=maybe", token)
    assert (status, body) == (400, {"message": "force: must be true or false"})
    status, body = await world.api.call("DELETE", path + "?cascade=true", token)
    assert status == 400 and body["message"].startswith("cascade: ")
    status, _ = await world.api.call("DELETE", path + "?force=true&permanent=false", token)
    assert status == 200
    assert stored(world, world.project_id) is None
    assert (
        world.site.services.db.read(lambda c: access_store.grantees_of(c, world.project_id)) == []
    )
    assert (await world.api.call("GET", path, token))[0] == 404


# -- suspension ------------------------------------------------------------------------------------
async def test_a_suspended_project_is_closed_to_its_members_until_reactivated(world: World) -> None:
    reader = await world.token("project_reader")
    admin = await world.token("org_admin")
    path = f"/v2/projects/{world.project_id}"
    assert (await world.api.call("GET", path, reader))[0] == 200
    assert (await world.api.call("PATCH", path, admin, json={"is_active": False}))[0] == 200
    assert (await world.api.call("GET", path, reader))[0] == 404  # its access no longer counts
    project = await get_project(world.api, admin, world.project_id)
    assert project["is_active"] is False
    status, body = await world.api.call("GET", "/v2/projects?is_active=false", admin)
    assert [p["id"] for p in body["projects"]] == [world.project_id]
    assert (await world.api.call("PATCH", path, admin, json={"is_active": True}))[0] == 200
    assert (await world.api.call("GET", path, reader))[0] == 200


# -- lists ---------------------------------------------------------------------------------------
async def test_list_filters(site: Site, api: Api, tenant: Tenant) -> None:
    for name, alias in (("Apollo", "apollo"), ("Gemini", None), ("Mercury", "mercury-7")):
        await new_project(site, tenant, name=name, alias=alias, tags=[name.lower()])
    token = await tenant.admin_token()

    async def names(query: str) -> list[str]:
        status, body = await api.call("GET", f"/v2/projects?{query}", token)
        assert status == 200, body
        return [p["name"] for p in body["projects"]]

    assert await names("") == ["Apollo", "Gemini", "Mercury"]
    assert await names("name=APOLLO") == ["Apollo"]
    assert await names("alias=mercury-7") == ["Mercury"]
    assert await names("name.regex=^(Gem|Mer)") == ["Gemini", "Mercury"]
    assert await names("name_regex=ury$") == ["Mercury"]
    assert await names("search=gem") == ["Gemini"]
    assert await names("tags.contains_any=apollo,gemini") == ["Apollo", "Gemini"]
    assert await names("order_by=name&desc=true") == ["Mercury", "Gemini", "Apollo"]
    assert await names("is_delete_protected=false&limit=1&page=2") == ["Gemini"]
    status, body = await api.call("GET", "/v2/projects?colour=red", token)
    assert status == 400 and body["message"].startswith("colour: ")
    status, body = await api.call("GET", "/v2/projects?page_count=&limit=2", token)
    assert (status, body) == (200, {"page_count": 2})


async def test_list_pages_with_a_continuation_key(site: Site, api: Api, tenant: Tenant) -> None:
    for n in range(5):
        await new_project(site, tenant, name=f"P{n}")
    token = await tenant.admin_token()
    seen: list[str] = []
    query = "limit=2"
    while True:
        status, body = await api.call("GET", f"/v2/projects?{query}", token)
        assert status == 200
        seen += [p["name"] for p in body["projects"]]
        if "last_evaluated_key" not in body:
            break
        query = f"limit=2&last_evaluated_key={_json(body['last_evaluated_key'])}"
    assert seen == [f"P{n}" for n in range(5)]


def _json(value: Any) -> str:
    import json
    from urllib.parse import quote

    return quote(json.dumps(value))
