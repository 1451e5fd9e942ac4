"""The caller's own organization: members read it, org admins change what they may."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tenants import PASSWORD
from tests.world import CALLERS, ORG_CHANGERS, World, table

READ = {**dict.fromkeys(CALLERS, 200), "staff_unscoped": 403, "anonymous": 401}  # every member


@pytest.mark.parametrize(("who", "expected"), table(READ))
async def test_get_my_org_by_role(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "GET", "/v2/my-org")
    assert status == expected, body
    if status == 200:
        org = world.other if who == "other_admin" else world.tenant
        assert body["org"]["id"] == org.org_id and body["org"]["alias"] == org.alias
        assert body["org"]["session_expire_mins"] == 5


@pytest.mark.parametrize(("who", "expected"), table(ORG_CHANGERS))
async def test_patch_my_org_by_role(world: World, who: str, expected: int) -> None:
    status, body = await world.call(who, "PATCH", "/v2/my-org", json={"description": "Changed"})
    assert status == expected, body
    org = world.site.services.orgs.get_row(world.tenant.org_id)
    other = world.site.services.orgs.get_row(world.other.org_id)
    assert org["description"] == ("Changed" if status == 200 and who != "other_admin" else "")
    assert other["description"] == ("Changed" if who == "other_admin" else "")


async def test_patch_applies_settings_and_normalizes_them(world: World) -> None:
    body = {
        "name": "Clinic North",
        "default_locale": "fr_fr",
        "mfa_required": True,
        "custom_settings": {"theme": "dark"},
        "pii_admin_only": True,
        "user_delete_protection_on_by_default": True,
        "role_delete_protection_on_by_default": True,
        "reset_token_expire_hours": 168,
    }
    status, reply = await world.call("org_admin", "PATCH", "/v2/my-org", json=body)
    assert (status, reply) == (200, {"message": "Success"})
    status, got = await world.call("org_admin", "GET", "/v2/my-org")
    org = got["org"]
    assert org["name"] == "Clinic North" and org["default_locale"] == "fr-FR"
    assert {k: org[k] for k in body if k not in ("name", "default_locale")} == {
        k: v for k, v in body.items() if k not in ("name", "default_locale")
    }
    assert org["last_updated_by"] == world.tenant.admin_id


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"max_roles_per_user": 50}, 406, "max_roles_per_user: is not a known field"),
        ({"allowed_login_fields": ["email"]}, 406, "allowed_login_fields: is not a known field"),
        ({"alias": "new"}, 406, "alias: is not a known field"),
        ({"is_active": False}, 406, "is_active: is not a known field"),
        ({"session_expire_mins": "5"}, 406, "session_expire_mins: must be of type integer"),
        ({"session_expire_mins": 2}, 400, "session_expire_mins: must be between 3 and 15"),
        (
            {"access_token_expire_hours": 25},
            400,
            "access_token_expire_hours: must be between 1 and 24",
        ),
        (
            {"name": "Bad/Name"},
            400,
            "name: may contain only letters, digits, spaces, periods, "
            "commas, underscores and hyphens",
        ),
        ({"default_locale": "xx_123456"}, 400, "default_locale: must be a locale such as en-US"),
    ],
)
async def test_patch_rules(world: World, body: dict[str, Any], status: int, message: str) -> None:
    assert await world.call("org_admin", "PATCH", "/v2/my-org", json=body) == (
        status,
        {"message": message},
    )


async def test_token_settings_apply_and_sign_in_keeps_working(world: World) -> None:
    status, _ = await world.call(
        "org_admin",
        "PATCH",
        "/v2/my-org",
        json={
            "access_token_expire_hours": 3,
            "refresh_token_expire_hours": 48,
            "session_expire_mins": 3,
        },
    )
    assert status == 200
    response = await world.api.client.post(
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": world.email("plain"),
            "password": PASSWORD,
            "client_id": "clinic",
        },
    )
    info = await response.json()
    assert response.status == 201, info
    assert 3 * 3600 - 60 <= info["expires_in"] <= 3 * 3600
    response = await world.api.client.post(
        "/v2/auth/token",
        data={"grant_type": "refresh_token", "refresh_token": info["refresh_token"]},
    )
    refreshed = await response.json()
    assert response.status == 201, refreshed
    status, _ = await world.api.call("GET", "/v2/my-org", refreshed["access_token"])
    assert status == 200


async def test_a_role_can_make_an_org_admin(world: World) -> None:
    role = await world.new_role(name="Admins")
    await world.grant("org", world.tenant.org_id, role, "role", is_admin=True)
    await world.grant("role", role, world.id("plain"))
    status, _ = await world.call("plain", "PATCH", "/v2/my-org", json={"description": "x"})
    assert status == 200
