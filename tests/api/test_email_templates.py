"""E-mail templates over HTTP: CRUD, who may manage them (denials next to grants), checks."""

from __future__ import annotations

from typing import Any

import pytest

from tests.world import (
    ADMIN_CREATORS,
    ADMIN_CREATORS_IN_APOLLO,
    APOLLO_ADMIN_RESOURCE,
    World,
    table,
)

BODY = {
    "name": "Welcome",
    "subject": "Welcome to {{ org_name }}",
    "body_txt": "Hello {{ username }}, your password is {{ temporary_password }}",
    "body_html": "<p>Hello {{ username }}</p>",
    "for_new_users": True,
}
PATH = "/v2/email/templates"


async def create(world: World, who: str = "org_admin", **extra: Any) -> str:
    token = await world.token(who)
    status, body = await world.api.call("POST", PATH, token, json={**BODY, **extra})
    assert status == 201, body
    return str(body["template"]["id"])


@pytest.mark.parametrize(("who", "expected"), table(ADMIN_CREATORS))
async def test_create_org_template_by_role(world: World, who: str, expected: int) -> None:
    status, body = await world.api.call("POST", PATH, await world.token(who), json=BODY)
    assert status == expected, body


@pytest.mark.parametrize(("who", "expected"), table(ADMIN_CREATORS_IN_APOLLO))
async def test_create_project_template_by_role(world: World, who: str, expected: int) -> None:
    body = {**BODY, "project_id": world.project_id}
    status, reply = await world.api.call("POST", PATH, await world.token(who), json=body)
    assert status == expected, reply


@pytest.mark.parametrize(("who", "expected"), table(APOLLO_ADMIN_RESOURCE))
async def test_get_patch_delete_project_template_by_role(
    world: World, who: str, expected: int
) -> None:
    template_id = await create(world, project_id=world.project_id)
    token = await world.token(who)
    status, body = await world.api.call("GET", f"{PATH}/{template_id}", token)
    assert status == expected, body
    status, body = await world.api.call(
        "PATCH", f"{PATH}/{template_id}", token, json={"description": "x"}
    )
    assert status == expected, body
    status, body = await world.api.call("DELETE", f"{PATH}/{template_id}", token)
    assert status == expected, body


async def test_a_project_admin_cannot_touch_org_templates(world: World) -> None:
    template_id = await create(world)
    token = await world.token("project_admin")
    status, _ = await world.api.call("GET", f"{PATH}/{template_id}", token)
    assert status == 403
    status, _ = await world.api.call(
        "PATCH", f"{PATH}/{template_id}", token, json={"project_id": world.project_id}
    )
    assert status == 403


async def test_crud_round_trip(world: World) -> None:
    template_id = await create(world, tags=["onboarding"], from_address="hr@clinic.test")
    token = await world.token("org_admin")
    status, body = await world.api.call("GET", f"{PATH}/{template_id}", token)
    got = body["template"]
    assert status == 200 and got["name"] == "Welcome" and got["for_new_users"] is True
    assert got["for_account_recovery"] is False and got["locale"] == "en-US"
    assert got["from_address"] == "hr@clinic.test" and got["tags"] == ["onboarding"]
    assert got["is_active"] is True and got["custom_args"] == []
    patch = {"subject": "Hi {{ first_name }}", "locale": "de_de", "is_delete_protected": True}
    status, _ = await world.api.call("PATCH", f"{PATH}/{template_id}", token, json=patch)
    assert status == 200
    _, body = await world.api.call("GET", f"{PATH}/{template_id}", token)
    assert body["template"]["subject"] == "Hi {{ first_name }}"
    assert body["template"]["locale"] == "de-DE"
    status, _ = await world.api.call("DELETE", f"{PATH}/{template_id}", token)
    assert status == 409  # delete protected
    status, _ = await world.api.call("DELETE", f"{PATH}/{template_id}?force=true", token)
    assert status == 200
    status, _ = await world.api.call("GET", f"{PATH}/{template_id}", token)
    assert status == 404


async def test_list_filters_and_project_admin_view(world: World) -> None:
    org_level = await create(world)
    project_level = await create(
        world,
        name="Reset",
        project_id=world.project_id,
        for_new_users=False,
        for_account_recovery=True,
    )
    admin = await world.token("org_admin")
    status, body = await world.api.call("GET", PATH, admin)
    assert status == 200
    assert {t["id"] for t in body["templates"]} == {org_level, project_level}
    _, body = await world.api.call("GET", f"{PATH}?for_account_recovery=true", admin)
    assert [t["id"] for t in body["templates"]] == [project_level]
    _, body = await world.api.call("GET", f"{PATH}?name=welcome", admin)
    assert [t["id"] for t in body["templates"]] == [org_level]
    _, body = await world.api.call("GET", f"{PATH}?project_id={world.project_id}", admin)
    assert [t["id"] for t in body["templates"]] == [project_level]
    _, body = await world.api.call("GET", PATH, await world.token("project_admin"))
    assert [t["id"] for t in body["templates"]] == [project_level]
    status, _ = await world.api.call("GET", PATH, await world.token("project_reader"))
    assert status == 403
    _, body = await world.api.call("GET", f"{PATH}?object_count=true", admin)
    assert body["object_count"] == 2


async def test_unknown_variables_are_refused_by_name(world: World) -> None:
    token = await world.token("org_admin")
    bad = {**BODY, "body_txt": "Hi {{ usernme }} {{ __class__ }}"}
    status, body = await world.api.call("POST", PATH, token, json=bad)
    assert status == 400
    assert "usernme" in body["message"] and "__class__" in body["message"]
    custom = {**BODY, "body_txt": "Badge {{ badge }}", "custom_args": ["badge"]}
    status, body = await world.api.call("POST", PATH, token, json=custom)
    assert status == 201, body
    template_id = body["template"]["id"]
    status, body = await world.api.call(
        "PATCH", f"{PATH}/{template_id}", token, json={"custom_args": []}
    )
    assert status == 400 and "badge" in body["message"]
    status, body = await world.api.call(
        "POST", PATH, token, json={**BODY, "custom_args": ["org_name"]}
    )
    assert status == 400 and body["message"].startswith("custom_args:")


async def test_shape_errors_are_406(world: World) -> None:
    token = await world.token("org_admin")
    status, _ = await world.api.call("POST", PATH, token, json={"name": "x"})
    assert status == 406
    status, _ = await world.api.call("POST", PATH, token, json={**BODY, "nope": 1})
    assert status == 406


async def test_search(world: World) -> None:
    found = await create(world, name="Onboarding letter", tags=["hr"])
    await create(world, name="Other")
    token = await world.token("org_admin")
    _, body = await world.api.call("GET", f"{PATH}?search=onboard", token)
    assert [t["id"] for t in body["templates"]] == [found]
    _, body = await world.api.call("GET", f"{PATH}?search=hr&search_fields=tags", token)
    assert [t["id"] for t in body["templates"]] == [found]
