"""Signing in to a project, the caller's own project ("my project"), the public UI config, and
the project's login fields (including what makes one a conflict).
"""

from __future__ import annotations

from typing import Any

import jwt
import pytest

from tests.conftest import Api
from tests.tenants import PASSWORD
from tests.world import DEVICES, World, table


async def sign_in(api: Api, client_id: str, username: str, password: str = PASSWORD) -> Any:
    response = await api.client.post(
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": username,
            "password": password,
            "client_id": client_id,
        },
    )
    return response.status, await response.json()


def claims(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


# -- signing in to a project ---------------------------------------------------------------------
NO_PASSWORD = ("staff", "staff_unscoped", "anonymous", *DEVICES)  # no users of an org
SIGN_IN = {
    "org_admin": 201,
    "project_admin": 201,
    "role_admin": 201,
    "org_user_perms": 403,
    "org_group_role_perms": 403,
    "org_project_perms": 403,  # org-level permissions are not access to the project
    "org_device_perms": 403,
    "project_user_perms": 201,
    "project_group_role_perms": 201,
    "project_device_perms": 201,
    "project_reader": 201,
    "project_updater": 201,
    "group_admin": 403,
    "group_user_perms": 403,
    "group_editor": 403,
    "group_device_perms": 403,
    "member": 403,  # a user of the project, but holding no access to it
    "holder": 403,
    "owner": 403,
    "plain": 403,
    "gemini_user": 400,  # a user of another project: not a login of this one
    "other_admin": 400,  # not a user of this project's organization
}
REFUSED = {
    400: "Incorrect username or password",
    403: "This account has no access to this project",
}


@pytest.mark.parametrize(("who", "expected"), table(SIGN_IN, not_applicable=NO_PASSWORD))
async def test_project_sign_in_needs_access_to_it(world: World, who: str, expected: int) -> None:
    status, body = await sign_in(world.api, "APOLLO", world.email(who))
    assert status == expected, body
    if status == 201:
        assert claims(body["access_token"])["prj"] == world.project_id
        assert body["expires_in"] == 3600
    else:
        assert body == {"message": REFUSED[status]}


async def test_project_sign_in_by_id_uses_the_projects_token_settings(world: World) -> None:
    admin = await world.token("org_admin")
    settings = {"access_token_expire_hours": 2, "refresh_token_expire_hours": 48}
    status, _ = await world.api.call(
        "PATCH", f"/v2/projects/{world.project_id}", admin, json=settings
    )
    assert status == 200
    status, body = await sign_in(world.api, world.project_id, world.email("project_reader"))
    assert status == 201 and body["expires_in"] == 2 * 3600
    token = body["access_token"]
    assert claims(token)["prj"] == world.project_id
    assert claims(token)["org"] == world.tenant.org_id
    status, org_body = await sign_in(world.api, "clinic", world.email("project_reader"))
    assert status == 201 and claims(org_body["access_token"])["prj"] is None
    assert org_body["expires_in"] == 3600  # the org's own setting
    status, refreshed = await world.api.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "refresh_token", "refresh_token": body["refresh_token"]},
    )
    assert status == 201 and refreshed["expires_in"] == 2 * 3600
    assert claims(refreshed["access_token"])["prj"] == world.project_id


async def test_bad_credentials_and_other_orgs_projects(world: World) -> None:
    status, body = await sign_in(
        world.api, "apollo", world.email("project_reader"), "wrong-password"
    )
    assert (status, body) == (400, {"message": "Incorrect username or password"})
    status, body = await sign_in(world.api, "theirs", world.email("project_reader"))
    assert (status, body) == (400, {"message": "Incorrect username or password"})
    status, body = await sign_in(world.api, "theirs", world.other.admin_email)
    assert status == 201 and claims(body["access_token"])["prj"] == world.other_project_id


async def test_suspended_or_deleted_projects_end_sessions_and_refuse_sign_in(world: World) -> None:
    status, body = await sign_in(world.api, "apollo", world.email("project_reader"))
    assert status == 201
    token, refresh = body["access_token"], body["refresh_token"]
    org_scoped = await world.token("project_reader")
    admin = await world.token("org_admin")
    path = f"/v2/projects/{world.project_id}"
    assert (await world.api.call("GET", "/v2/my-project", token))[0] == 200
    assert (await world.api.call("PATCH", path, admin, json={"is_active": False}))[0] == 200
    assert (await world.api.call("GET", "/v2/my-project", token))[0] == 401
    assert (await world.api.call("GET", "/v2/projects", org_scoped))[0] == 200
    status, body = await world.api.call(
        "POST", "/v2/auth/token", data={"grant_type": "refresh_token", "refresh_token": refresh}
    )
    assert status == 400
    assert await sign_in(world.api, "apollo", world.email("project_reader")) == (
        403,
        {"message": "This project is suspended"},
    )
    assert (await world.api.call("PATCH", path, admin, json={"is_active": True}))[0] == 200
    status, body = await sign_in(world.api, "apollo", world.email("project_reader"))
    assert status == 201
    token = body["access_token"]
    assert (await world.api.call("DELETE", path, admin))[0] == 200
    assert (await world.api.call("GET", "/v2/my-project", token))[0] == 401
    status, body = await sign_in(world.api, "apollo", world.email("project_reader"))
    assert (status, body) == (400, {"message": "client_id: does not name an organization"})


async def test_refresh_needs_access_still(world: World) -> None:
    status, body = await sign_in(world.api, "apollo", world.email("project_reader"))
    assert status == 201
    admin = await world.token("org_admin")
    target = f"/v2/projects/{world.project_id}/access/{world.id('project_reader')}"
    assert (await world.api.call("DELETE", target, admin))[0] == 200
    status, reply = await world.api.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "refresh_token", "refresh_token": body["refresh_token"]},
    )
    assert (status, reply) == (403, {"message": "This account has no access to this project"})


# -- login fields --------------------------------------------------------------------------------
async def test_project_login_fields_decide_what_username_may_be(world: World) -> None:
    await world.site.services.db.write(
        lambda c: c.execute(
            "UPDATE users SET phone_number = '+15550102000', phone_folded = '+15550102000'"
            " WHERE id = ?",
            (world.id("project_reader"),),
        )
    )
    admin = await world.token("org_admin")
    path = f"/v2/projects/{world.project_id}"
    for login in ("project_reader", "PROJECT_READER@clinic.test", "+1 (555) 010-2000"):
        assert (await sign_in(world.api, "apollo", login))[0] == 201, login
    body = {"allowed_login_fields": ["phone_number"]}
    assert (await world.api.call("PATCH", path, admin, json=body))[0] == 200
    for login in ("project_reader", "project_reader@clinic.test"):
        assert (await sign_in(world.api, "apollo", login))[0] == 400, login
    assert (await sign_in(world.api, "apollo", "+15550102000"))[0] == 201
    body = {"allowed_login_fields": ["username"]}
    assert (await world.api.call("PATCH", path, admin, json=body))[0] == 200
    assert (await sign_in(world.api, "apollo", "+15550102000"))[0] == 400
    assert (await sign_in(world.api, "apollo", "Project_Reader"))[0] == 201


async def test_enabling_a_login_field_that_would_be_ambiguous_is_a_409(world: World) -> None:
    """Two accounts of the project's scope share a phone number: phone login cannot be enabled.

    Users of another project do not count; the conflict is checked only for fields being
    turned on, so other changes to the project keep working.
    """
    twins = [await world.add_user(n, phone_folded="+15550109999") for n in ("twin_a", "twin_b")]
    admin = await world.token("org_admin")
    path = f"/v2/projects/{world.project_id}"
    body = {"allowed_login_fields": ["username"]}
    assert (await world.api.call("PATCH", path, admin, json=body))[0] == 200
    body = {"allowed_login_fields": ["username", "phone_number"]}
    status, reply = await world.api.call("PATCH", path, admin, json=body)
    assert status == 409 and reply["message"].startswith("allowed_login_fields: ")
    assert (await world.api.call("GET", path, admin))[1]["project"]["allowed_login_fields"] == [
        "username"
    ]
    status, reply = await world.api.call("POST", "/v2/projects", admin, json={"name": "N", **body})
    assert status == 409
    assert (await world.api.call("PATCH", path, admin, json={"description": "ok"}))[0] == 200
    # Move one twin into another project: the rest of the scope is unambiguous again.
    elsewhere = world.second_project_id
    await world.site.services.db.write(
        lambda c: c.execute("UPDATE users SET project_id = ? WHERE id = ?", (elsewhere, twins[1]))
    )
    assert (await world.api.call("PATCH", path, admin, json=body))[0] == 200


async def test_an_ambiguous_login_signs_no_one_in(world: World) -> None:
    """Conflicts made before the field was checked (the project inherited phone login) fail
    closed: a phone number two accounts share names neither of them."""
    for name in ("twin_a", "twin_b"):
        user_id = await world.add_user(name, phone_folded="+15550109999")
        await world.grant("project", world.project_id, user_id, can_read=True)
    assert (await sign_in(world.api, "apollo", "+15550109999"))[0] == 400
    assert (await sign_in(world.api, "apollo", "twin_a"))[0] == 201


async def test_a_username_equal_to_anothers_phone_is_a_conflict(world: World) -> None:
    await world.add_user("+15550107777")
    await world.add_user("caller", phone_folded="+15550107777")
    admin = await world.token("org_admin")
    body = {"name": "Phones", "allowed_login_fields": ["phone_number"]}
    assert (await world.api.call("POST", "/v2/projects", admin, json=body))[0] == 201
    body = {"name": "Both", "allowed_login_fields": ["username", "phone_number"]}
    assert (await world.api.call("POST", "/v2/projects", admin, json=body))[0] == 409


# -- my project ------------------------------------------------------------------------------------
# Every member signed in to the project may read it (the updater has no can_read); a token
# for a project the account has no access to (not one sign-in gives) reads nothing.
MINE = {
    "org_admin": 200,
    "project_admin": 200,
    "role_admin": 200,
    "org_user_perms": 404,
    "org_group_role_perms": 404,
    "org_project_perms": 200,
    "org_device_perms": 404,
    "project_user_perms": 200,
    "project_group_role_perms": 200,
    "project_device_perms": 200,
    "project_reader": 200,
    "project_updater": 200,
    "group_admin": 404,
    "group_user_perms": 404,
    "group_editor": 404,
    "group_device_perms": 404,
    "member": 404,
    "holder": 404,
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "other_admin": 404,
}
NO_PROJECT_SESSION = NO_PASSWORD  # staff (see the test below) and devices: no project sessions


@pytest.mark.parametrize(("who", "expected"), table(MINE, not_applicable=NO_PROJECT_SESSION))
async def test_my_project_reads_the_signed_in_project(
    world: World, who: str, expected: int
) -> None:
    token = await world.token(who, project_id=world.project_id)
    status, body = await world.api.call("GET", "/v2/my-project", token)
    assert status == expected, body
    if status == 200:
        assert set(body) == {"project"} and body["project"]["id"] == world.project_id
        assert ("is_active" in body["project"]) is (
            who in ("org_admin", "project_admin", "role_admin")
        )


@pytest.mark.parametrize("who", ["org_admin", "project_reader", "staff"])
async def test_my_project_needs_a_project_session(world: World, who: str) -> None:
    token = await world.token(who)
    for method in ("GET", "PATCH"):
        kwargs = {"json": {}} if method == "PATCH" else {}
        status, body = await world.api.call(method, "/v2/my-project", token, **kwargs)
        assert (status, body) == (
            404,
            {"message": "This session is not signed in to a project"},
        ), method
    assert (await world.api.call("GET", "/v2/my-project"))[0] == 401


PATCH_MINE = {
    **dict.fromkeys(MINE, 403),
    "org_admin": 200,
    "project_admin": 200,
    "role_admin": 200,
    "org_project_perms": 200,  # org-level project update
    "project_updater": 403,  # "settings admins can update": updaters use PATCH /projects/{id}
    **{who: 404 for who, status in MINE.items() if status == 404},
}


@pytest.mark.parametrize(("who", "expected"), table(PATCH_MINE, not_applicable=NO_PROJECT_SESSION))
async def test_patch_my_project_by_role(world: World, who: str, expected: int) -> None:
    token = await world.token(who, project_id=world.project_id)
    body = {"description": "mine", "pii_admin_only": True}
    status, reply = await world.api.call("PATCH", "/v2/my-project", token, json=body)
    assert status == expected, reply
    admin = await world.token("org_admin")
    project = (await world.api.call("GET", f"/v2/projects/{world.project_id}", admin))[1]
    assert project["project"]["pii_admin_only"] is (status == 200)


async def test_patching_my_projects_token_settings_keeps_sign_in_working(world: World) -> None:
    status, body = await sign_in(world.api, "apollo", world.email("project_admin"))
    assert status == 201
    token = body["access_token"]
    settings = {
        "access_token_expire_hours": 5,
        "refresh_token_expire_hours": 10,
        "session_expire_mins": 3,
        "reset_token_expire_hours": 1,
    }
    assert await world.api.call("PATCH", "/v2/my-project", token, json=settings) == (
        200,
        {"message": "Success"},
    )
    status, reply = await world.api.call("GET", "/v2/my-project", token)
    assert {k: reply["project"][k] for k in settings} == settings
    status, body = await sign_in(world.api, "apollo", world.email("project_admin"))
    assert status == 201 and body["expires_in"] == 5 * 3600
    status, refreshed = await world.api.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "refresh_token", "refresh_token": body["refresh_token"]},
    )
    assert status == 201 and refreshed["expires_in"] == 5 * 3600
    status, reply = await world.api.call(
        "PATCH", "/v2/my-project", token, json={"session_expire_mins": 2}
    )
    assert (status, reply) == (400, {"message": "session_expire_mins: must be between 3 and 15"})
    status, reply = await world.api.call(
        "PATCH", "/v2/my-project", token, json={"is_active": False}
    )
    assert (status, reply) == (406, {"message": "is_active: is not a known field"})


SCOPED_LIST_HOLDS_APOLLO = {
    **{who: status == 200 for who, status in MINE.items()},
    "project_updater": False,  # may read it as "my project", may not list it
    "project_user_perms": False,
    "project_group_role_perms": False,
    "project_device_perms": False,
}


@pytest.mark.parametrize(
    ("who", "listed"), table(SCOPED_LIST_HOLDS_APOLLO, not_applicable=NO_PROJECT_SESSION)
)
async def test_project_scope_lists_only_its_project(world: World, who: str, listed: bool) -> None:
    token = await world.token(who, project_id=world.project_id)
    status, body = await world.api.call("GET", "/v2/projects", token)
    assert status == 200
    assert [p["id"] for p in body["projects"]] == ([world.project_id] if listed else [])


# -- the public UI configuration ---------------------------------------------------------------
async def test_ui_config_of_a_project_or_org_by_id_or_alias(world: World) -> None:
    admin = await world.token("org_admin")
    ui = {"primary_color": "#123456", "images": {"logo_small": "https://x.test/l.png"}}
    body = {"ui_config": ui, "allowed_login_fields": ["email", "username"]}
    path = f"/v2/projects/{world.project_id}"
    assert (await world.api.call("PATCH", path, admin, json=body))[0] == 200
    expected = {
        "client_id": world.project_id,
        "allowed_login_fields": ["email", "username"],
        "ui_config": ui,
    }
    for name in (world.project_id, "apollo", "APOLLO"):
        assert await world.api.call("GET", f"/v2/ui/{name}") == (200, expected), name
    org = {
        "client_id": world.tenant.org_id,
        "allowed_login_fields": ["username", "email", "phone_number"],
        "ui_config": {},
    }
    for name in (world.tenant.org_id, "clinic", "Clinic"):
        assert await world.api.call("GET", f"/v2/ui/{name}") == (200, org), name


async def test_ui_config_of_an_unknown_client_is_404(world: World) -> None:
    for name in ("nobody", "x" * 16, world.id("project_reader")):
        status, body = await world.api.call("GET", f"/v2/ui/{name}")
        assert (status, body) == (404, {"message": "No organization or project has this client ID"})
