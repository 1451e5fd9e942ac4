"""The caller's own account: access lists, the current session's permissions, the dashboard."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest

from tests.world import ALL, World

NO_CRUD = dict.fromkeys(ALL, False)


async def get(world: World, who: str, path: str) -> Any:
    status, body = await world.call(who, "GET", path)
    assert status == 200, body
    return body


# -- org access ------------------------------------------------------------------------------
async def test_org_access_of_an_org_admin(world: World) -> None:
    body = await get(world, "org_admin", "/v2/account/access/org")
    access = body["org_access"]
    assert set(body) == {"org_access"}
    assert access["org_id"] == world.tenant.org_id
    assert access["grantee_id"] == world.tenant.admin_id
    assert access["is_admin"] is True and access["user_permissions"] == ALL
    assert access["tags"] == [] and access["is_delete_protected"] is False


ACCOUNT_ROUTES = (
    "/v2/account/access/org",
    "/v2/account/access/projects",
    "/v2/account/access/groups",
    "/v2/account/access/roles",
    "/v2/account/dashboard",
)


async def test_staff_hold_no_account(world: World) -> None:
    """That staff hold no account is tested in tests/edge/tenancy/test_account.py; here, the
    403 Status, and that every route needs a caller."""
    status, body = await world.call("staff", "GET", "/v2/account/access/groups")
    assert status == 403 and set(body) == {"message"}, body
    for path in ACCOUNT_ROUTES:
        status, _ = await world.call("anonymous", "GET", path)
        assert status == 401, path


async def test_sms_verification_endpoints_are_gone(world: World) -> None:
    for method in ("POST", "PUT"):
        status, _ = await world.call("plain", method, "/v2/account/sms/verification")
        assert status == 404


# -- project and group access ----------------------------------------------------------------
async def test_project_access_lists_own_and_role_access_with_the_project(world: World) -> None:
    second = await world.new_project(name="Clinic Two", description="Second site", tags=["x"])
    role = await world.new_role(name="Auditors")
    await world.grant("project", second, role, "role", can_read=True)
    await world.grant("role", role, world.id("project_admin"))
    body = await get(world, "project_admin", "/v2/account/access/projects?order_by=project_name")
    rows = body["project_access"]
    assert [r["project_name"] for r in rows] == ["Apollo", "Clinic Two"]
    apollo, two = rows
    assert (two["grantee_id"], two["project_id"]) == (role, second)
    assert two["project_description"] == "Second site" and two["project_tags"] == ["x"]
    assert apollo["is_admin"] is True and apollo["grantee_id"] == world.id("project_admin")
    assert apollo["is_active"] is True and apollo["group_permissions"] == NO_CRUD
    body = await get(world, "project_admin", "/v2/account/access/projects?project_name=APOLLO")
    assert [r["project_id"] for r in body["project_access"]] == [world.project_id]
    body = await get(
        world, "project_admin", "/v2/account/access/projects?ids_only=true&is_admin=true"
    )
    assert body == {"project_ids": [world.project_id]}


async def test_plain_users_hold_no_project_access(world: World) -> None:
    assert await get(world, "plain", "/v2/account/access/projects") == {"project_access": []}


async def test_group_access_filters_and_inactive_groups(world: World) -> None:
    old = await world.new_group(name="Old Team", tags=["archive"])
    await world.site.services.groups.patch(world.admin, old, {"is_active": False})
    lab = await world.new_group(
        world.project_id, name="Lab", description="Blood work", tags=["lab", "blood"]
    )
    for group in (old, lab):
        await world.grant(
            "group", group, world.id("member"), can_read=True, data_paths={"/a": {"can_read": True}}
        )
    path = "/v2/account/access/groups"
    body = await get(world, "member", path)
    ids = {r["group_id"] for r in body["group_access"]}
    assert ids == {world.org_group_id, lab}  # the inactive group is left out
    body = await get(world, "member", path + "?include_inactive_groups=true")
    assert {r["group_id"] for r in body["group_access"]} == {world.org_group_id, lab, old}
    lab_row = next(r for r in body["group_access"] if r["group_id"] == lab)
    assert lab_row["group_name"] == "Lab" and lab_row["group_description"] == "Blood work"
    assert lab_row["group_tags"] == ["lab", "blood"]
    assert lab_row["data_paths"] == {"/a": {"can_read": True}} and lab_row["file_paths"] == {}
    assert lab_row["role_permissions"] == NO_CRUD
    queries = {
        "group_name=lab": {lab},
        "group_name.regex=^(Lab|Ward)$": {lab, world.org_group_id},
        "group_tags.contains=blood": {lab},
        f"project_id={world.project_id}": {lab},
        "search=blood": {lab},
        "can_read=true": {lab},
    }
    for query, wanted in queries.items():
        body = await get(world, "member", f"{path}?{query}")
        assert {r["group_id"] for r in body["group_access"]} == wanted, query
    body = await get(world, "member", f"{path}?ids_only=true&group_name=ward")
    assert body == {"group_ids": [world.org_group_id]}
    body = await get(world, "member", f"{path}?object_count=true")
    assert body == {"object_count": 2}


async def test_project_session_lists_only_that_projects_groups(world: World) -> None:
    lab = world.project_group_id
    await world.grant("group", lab, world.id("member"))
    token = await world.token("member", project_id=world.project_id)
    status, body = await world.api.call("GET", "/v2/account/access/groups", token)
    assert status == 200 and [r["group_id"] for r in body["group_access"]] == [lab]


async def test_unknown_access_filters_are_400(world: World) -> None:
    status, body = await world.call("member", "GET", "/v2/account/access/groups?colour=red")
    assert (status, body) == (400, {"message": "colour: is not a query parameter of this list"})


# -- every route, in an org session and in a project session ---------------------------------
SCOPES = ("org", "project")
ACCOUNT_READS = (
    "/v2/account/access/org",
    "/v2/account/access/projects",
    "/v2/account/access/groups",
    "/v2/account/access/roles",
    "/v2/account/access/current-session",
    "/v2/account/dashboard",
)


async def session(world: World, who: str, scope: str) -> str | None:
    """`who`'s token: an org session, or one signed in with Apollo's alias."""
    return await world.token(who, project_id=world.project_id if scope == "project" else None)


async def get_in(world: World, who: str, scope: str, path: str) -> Any:
    status, body = await world.api.call("GET", path, await session(world, who, scope))
    assert status == 200, (path, body)
    return body


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("path", ACCOUNT_READS)
@pytest.mark.parametrize("who", ["org_admin", "project_admin", "role_admin", "member", "plain"])
async def test_every_account_read_answers_both_sessions(
    world: World, who: str, path: str, scope: str
) -> None:
    body = await get_in(world, who, scope, path)
    assert isinstance(body, dict) and "message" not in body
    for query in ("?ids_only=true", "?object_count=true"):
        if path.split("/")[-1] in ("projects", "groups", "roles"):
            assert isinstance(await get_in(world, who, scope, path + query), dict)


@pytest.mark.parametrize("scope", SCOPES)
async def test_account_writes_answer_both_sessions(world: World, scope: str) -> None:
    token = await session(world, "member", scope)
    body = {"widgets": WIDGETS}
    status, reply = await world.api.call("PUT", "/v2/account/dashboard", token, json=body)
    assert (status, reply) == (200, {"message": "Success"})
    assert await get_in(world, "member", scope, "/v2/account/dashboard") == body
    status, reply = await world.api.call("DELETE", "/v2/account/picture", token)
    assert status in (200, 404), reply


@pytest.mark.parametrize("scope", SCOPES)
async def test_project_access_in_either_session(world: World, scope: str) -> None:
    """A project session lists the access held on its own project only."""
    second = await world.new_project(name="Clinic Two")
    await world.grant("project", second, world.id("project_admin"), can_read=True)
    body = await get_in(world, "project_admin", scope, "/v2/account/access/projects")
    shown = [r["project_id"] for r in body["project_access"]]
    wanted = [world.project_id] if scope == "project" else [world.project_id, second]
    assert shown == wanted
    assert body["project_access"][0]["project_name"] == "Apollo"
    body = await get_in(world, "role_admin", scope, "/v2/account/access/projects?ids_only=true")
    assert body == {"project_ids": [world.project_id]}  # held through Project admins


@pytest.mark.parametrize("scope", SCOPES)
async def test_group_and_role_access_in_either_session(world: World, scope: str) -> None:
    lab = world.project_group_id
    await world.grant("group", lab, world.id("member"))
    await world.grant("role", world.project_role_id, world.id("member"))
    body = await get_in(world, "member", scope, "/v2/account/access/groups?ids_only=true")
    wanted = [lab] if scope == "project" else [world.org_group_id, lab]
    assert body == {"group_ids": wanted}
    body = await get_in(world, "member", scope, "/v2/account/access/roles?ids_only=true")
    assert body == {"role_ids": [world.project_role_id]}


@pytest.mark.parametrize("scope", SCOPES)
async def test_ids_only_names_a_target_held_twice_once(world: World, scope: str) -> None:
    """Held directly and through one or two roles: one ID, in lists, pages and counts."""
    who = world.id("project_admin")
    await world.grant("role", world.admin_role_id, who)  # Apollo again, through the role
    second_role = await world.new_role(name="Deputies")
    await world.grant("project", world.project_id, second_role, "role", can_read=True)
    await world.grant("role", second_role, who)
    path = "/v2/account/access/projects"
    body = await get_in(world, "project_admin", scope, path + "?ids_only=true")
    assert body == {"project_ids": [world.project_id]}
    body = await get_in(world, "project_admin", scope, path + "?ids_only=true&can_read=true")
    assert body == {"project_ids": [world.project_id]}  # the row that matches is the one kept
    body = await get_in(world, "project_admin", scope, path + "?ids_only=true&object_count=true")
    assert body == {"object_count": 1}
    rows = (await get_in(world, "project_admin", scope, path))["project_access"]
    assert len(rows) == 3  # the full list still shows each access object
    member = world.id("member")
    await world.grant("role", world.org_role_id, member)  # Nurses hold Ward too
    lab = world.project_group_id
    await world.grant("group", lab, member)
    await world.grant("group", lab, world.org_role_id, "role")
    path = "/v2/account/access/groups?ids_only=true&limit=1"
    body = await get_in(world, "member", scope, path)
    ids = list(body["group_ids"])
    while "last_evaluated_key" in body:
        key = json.dumps(body["last_evaluated_key"])
        body = await get_in(world, "member", scope, f"{path}&last_evaluated_key={quote(key)}")
        ids += body["group_ids"]
    assert ids == ([lab] if scope == "project" else [world.org_group_id, lab])


# -- role access -----------------------------------------------------------------------------
async def test_role_access_and_is_active_only_for_admins(world: World) -> None:
    await world.grant("role", world.project_role_id, world.id("member"), can_read=True)
    await world.grant("role", world.project_role_id, world.tenant.admin_id)
    body = await get(world, "member", "/v2/account/access/roles")
    (row,) = body["role_access"]
    assert row["role_id"] == world.project_role_id and row["account_id"] == world.id("member")
    assert row["can_read"] is True and row["user_permissions"] == NO_CRUD
    assert "is_active" not in row and "is_admin" not in row
    (row,) = (await get(world, "org_admin", "/v2/account/access/roles"))["role_access"]
    assert row["is_active"] is True
    body = await get(world, "member", "/v2/account/access/roles?ids_only=false")
    assert len(body["role_access"]) == 1
    body = await get(world, "member", "/v2/account/access/roles?ids_only=true")
    assert body == {"role_ids": [world.project_role_id]}


async def test_role_access_filtered_by_a_group_the_role_holds(world: World) -> None:
    other_role = await world.new_role(name="Cleaners")
    await world.grant("group", world.org_group_id, world.project_role_id, "role")
    for role in (world.project_role_id, other_role):
        await world.grant("role", role, world.id("member"))
    body = await get(world, "member", f"/v2/account/access/roles?group_id={world.org_group_id}")
    assert [r["role_id"] for r in body["role_access"]] == [world.project_role_id]


# -- current session -------------------------------------------------------------------------
async def test_current_session_merges_roles(world: World) -> None:
    body = await get(world, "plain", "/v2/account/access/current-session")
    assert set(body) == {"org_permissions"}
    assert body["org_permissions"]["user_permissions"] == NO_CRUD
    role = await world.new_role(name="Readers")
    await world.grant("org", world.tenant.org_id, role, "role", user_permissions={"can_read": True})
    await world.grant(
        "org", world.tenant.org_id, world.id("plain"), device_permissions={"can_create": True}
    )
    await world.grant("role", role, world.id("plain"))
    perms = (await get(world, "plain", "/v2/account/access/current-session"))["org_permissions"]
    assert perms["user_permissions"] == {**NO_CRUD, "can_read": True}
    assert perms["device_permissions"] == {**NO_CRUD, "can_create": True}
    assert perms["is_admin"] is False


async def test_current_session_of_admins_and_project_sessions(world: World) -> None:
    perms = await get(world, "org_admin", "/v2/account/access/current-session")
    assert perms["org_permissions"]["is_admin"] is True
    assert perms["org_permissions"]["project_permissions"] == ALL
    staff = await get(world, "staff", "/v2/account/access/current-session")
    assert staff["org_permissions"]["is_admin"] is True
    token = await world.token("project_admin", project_id=world.project_id)
    status, body = await world.api.call("GET", "/v2/account/access/current-session", token)
    assert status == 200
    assert body["org_permissions"]["is_admin"] is False
    assert body["project_permissions"]["is_admin"] is True
    assert body["project_permissions"]["user_permissions"] == ALL
    assert "project_permissions" not in body["project_permissions"]


# -- dashboard -------------------------------------------------------------------------------
WIDGETS = [
    {
        "order": 1,
        "widget_type": "plot",
        "widget_title": "Heart rate",
        "config": {"plot_type": "line", "group_id": "g", "data_path": "/hr", "nested": {"a": [1]}},
    },
    {"order": 2, "widget_type": "text", "widget_title": "", "config": {}},
]


async def test_dashboard_starts_empty_and_round_trips(world: World) -> None:
    assert await get(world, "member", "/v2/account/dashboard") == {"widgets": []}
    status, body = await world.call(
        "member", "PUT", "/v2/account/dashboard", json={"widgets": WIDGETS}
    )
    assert (status, body) == (200, {"message": "Success"})
    assert await get(world, "member", "/v2/account/dashboard") == {"widgets": WIDGETS}
    assert await get(world, "plain", "/v2/account/dashboard") == {"widgets": []}  # per user
    status, _ = await world.call("member", "PUT", "/v2/account/dashboard", json={"widgets": []})
    assert await get(world, "member", "/v2/account/dashboard") == {"widgets": []}


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({}, 406, "widgets: is required"),
        ({"widgets": {}}, 406, "widgets: must be of type array"),
        ({"widgets": [{"order": 1}]}, 406, "widgets.0.widget_type: is required"),
        (
            {"widgets": [{**WIDGETS[0], "config": "line"}]},
            406,
            "widgets.0.config: must be of type object",
        ),
        (
            {"widgets": [{**WIDGETS[0], "widget_type": " "}]},
            400,
            "widgets.0.widget_type: must not be empty",
        ),
        (  # the document's maxLength counts what is sent, stripped or not
            {"widgets": [{**WIDGETS[0], "widget_title": "\n" + "x" * 128}]},
            400,
            "widgets.0.widget_title: must be at most 128 characters",
        ),
        (
            {"widgets": [{**WIDGETS[0], "order": 2**31}]},
            400,
            "widgets.0.order: must be between -2147483648 and 2147483647",
        ),
    ],
)
async def test_dashboard_shape_and_values(
    world: World, body: dict[str, Any], status: int, message: str
) -> None:
    assert await world.call("member", "PUT", "/v2/account/dashboard", json=body) == (
        status,
        {"message": message},
    )
