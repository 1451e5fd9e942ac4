"""Passwords from the shipped list of common and breached passwords are refused wherever
a password is chosen, and the message says why."""

from __future__ import annotations

import pytest

from edge.app import Site
from edge.auth import common_passwords, hashing
from edge.auth.hashing import COMMON
from edge.kernel.errors import ValidationError
from edge.kernel.principal import Principal
from storage import staff
from tests.tenants import PASSWORD, Tenant

COMMON_ONES = ["password1", "Password123", "qwertyuiop", "1qaz2wsx", "TRUSTNO1", " letmein123 "]


def test_the_list_ships_with_the_package() -> None:
    assert common_passwords.size() > 19_000
    assert common_passwords.is_common("password1")
    assert not common_passwords.is_common("correct horse battery staple 42")


@pytest.mark.parametrize("password", COMMON_ONES)
async def test_changing_to_a_common_password_is_refused(tenant: Tenant, password: str) -> None:
    await tenant.add_user("nurse")
    token = await tenant.token("nurse@clinic.test")
    form = {"old_password": PASSWORD, "new_password": password}
    status, reply = await tenant.api.call("PUT", "/v2/auth/password", token, data=form)
    assert (status, reply) == (400, {"message": f"new_password: {COMMON}"})


async def test_a_new_user_may_not_get_a_common_password(tenant: Tenant) -> None:
    token = await tenant.token()
    body = {"username": "newbie", "email": "newbie@clinic.test", "password": "football1"}
    status, reply = await tenant.api.call("POST", "/v2/users", token, json=body)
    assert (status, reply) == (400, {"message": f"password: {COMMON}"})


async def test_an_org_admin_may_not_get_a_common_password(site: Site) -> None:
    owner = site.services.db.read(staff.first)
    with pytest.raises(ValidationError) as caught:
        await site.services.orgs.create(
            Principal("staff", owner["id"], None),
            {"name": "Weak"},
            admin={"email": "a@weak.test", "password": "iloveyou1"},
        )
    assert caught.value.message == f"admin_password: {COMMON}"


def test_the_policy_names_the_reason() -> None:
    with pytest.raises(ValidationError) as caught:
        hashing.check_policy("sunshine1", field="new_password")
    assert "most common passwords" in caught.value.message
