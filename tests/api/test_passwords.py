"""PUT /v2/auth/password: signed in with old_password, or with a reset token; the policy;
and the session effects (every session of the user ends, the principal cache included)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from edge.app import Site
from edge.auth import reset_tokens
from edge.kernel import clock
from storage import users
from tests.conftest import Api
from tests.tenants import PASSWORD, Tenant

NEW = "a-brand-new-password"
CURRENT = "/v2/account/access/current-session"
POLICY = [
    ("short", "new_password: must be at least 8 characters"),
    ("x" * 257, "new_password: must be at most 256 characters"),
    ("NightNurse", "new_password: must not be the username"),
    ("NIGHTNURSE@clinic.test", "new_password: must not be the e-mail address"),
]


@pytest.fixture
async def nurse(tenant: Tenant) -> str:
    return await tenant.add_user("nightnurse")


async def mark_temporary(site: Site, user_id: str) -> None:
    """As if an admin had just set a temporary password (sign-in would then be a challenge)."""
    flags = {"has_temporary_password": 1, "new_password_required": 1}
    await site.services.db.write(lambda c: users.patch(c, user_id, flags))


async def sign_in(api: Api, password: str = PASSWORD) -> dict[str, Any]:
    status, body = await api.call(
        "POST",
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": "nightnurse",
            "password": password,
            "client_id": "clinic",
        },
    )
    assert status == 201, body
    return dict(body)


async def change(api: Api, token: str | None, **form: str) -> tuple[int, Any]:
    return await api.call("PUT", "/v2/auth/password", token, data=form)


def row(site: Site, user_id: str) -> dict[str, Any]:
    found = site.services.db.read(lambda c: users.get(c, user_id))
    assert found is not None
    return found


async def test_signed_in_change_ends_every_session_and_clears_the_flags(
    api: Api, site: Site, nurse: str
) -> None:
    first, second = await sign_in(api), await sign_in(api)
    for info in (first, second):  # both principals are now cached
        assert (await api.call("GET", CURRENT, info["access_token"]))[0] == 200
    await mark_temporary(site, nurse)
    before = row(site, nurse)["password_last_changed"]
    clock.advance(timedelta(seconds=1))

    status, body = await change(api, first["access_token"], old_password=PASSWORD, new_password=NEW)
    assert (status, body) == (200, {"message": "Success"})

    for info in (first, second):
        status, body = await api.call("GET", CURRENT, info["access_token"])
        assert (status, body) == (401, {"message": "Session has ended; sign in again"})
        status, _ = await api.call(
            "POST",
            "/v2/auth/token",
            data={"grant_type": "refresh_token", "refresh_token": info["refresh_token"]},
        )
        assert status == 400
    after = row(site, nurse)
    assert after["password_last_changed"] > before
    assert after["has_temporary_password"] == 0 and after["new_password_required"] == 0
    status, _ = await api.call(
        "POST",
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": "nightnurse",
            "password": PASSWORD,
            "client_id": "clinic",
        },
    )
    assert status == 400
    await sign_in(api, NEW)


@pytest.mark.parametrize(("password", "message"), POLICY)
async def test_signed_in_change_enforces_the_policy(
    api: Api, nurse: str, password: str, message: str
) -> None:
    token = (await sign_in(api))["access_token"]
    status, body = await change(api, token, old_password=PASSWORD, new_password=password)
    assert (status, body) == (400, {"message": message})
    assert (await api.call("GET", CURRENT, token))[0] == 200  # nothing changed


@pytest.mark.parametrize(
    ("form", "answer"),
    [
        ({"new_password": NEW}, (400, {"message": "old_password: is required"})),
        (
            {"new_password": NEW, "old_password": "not-my-password"},
            (400, {"message": "old_password: is incorrect"}),
        ),
        (
            {"new_password": PASSWORD, "old_password": PASSWORD},
            (400, {"message": "new_password: must differ from the current password"}),
        ),
        ({"old_password": PASSWORD}, (406, {"message": "new_password: is required"})),
    ],
)
async def test_bad_signed_in_changes_are_refused(
    api: Api, nurse: str, form: dict[str, str], answer: tuple[int, Any]
) -> None:
    token = (await sign_in(api))["access_token"]
    assert await change(api, token, **form) == answer
    assert (await api.call("GET", CURRENT, token))[0] == 200


async def test_a_change_needs_a_token(api: Api, nurse: str) -> None:
    status, _ = await change(api, None, old_password=PASSWORD, new_password=NEW)
    assert status == 401
    status, _ = await change(api, "not.a.jwt", old_password=PASSWORD, new_password=NEW)
    assert status == 401


async def test_staff_change_their_own_password(api: Api, staff_token: str) -> None:
    from tests.conftest import STAFF_PASSWORD

    status, _ = await change(api, staff_token, old_password=STAFF_PASSWORD, new_password=NEW)
    assert status == 200
    assert (await api.call("GET", "/v2/orgs", staff_token))[0] == 401
    await api.token(password=NEW)


async def test_reset_token_as_bearer_sets_the_password_once(
    api: Api, site: Site, nurse: str
) -> None:
    session = await sign_in(api)
    await mark_temporary(site, nurse)
    token = await reset_tokens.issue(site.services.db, row(site, nurse), 24)
    assert (await change(api, token, new_password=NEW)) == (200, {"message": "Success"})
    assert (await api.call("GET", CURRENT, session["access_token"]))[0] == 401
    assert row(site, nurse)["has_temporary_password"] == 0
    await sign_in(api, NEW)
    # single use
    status, body = await change(api, token, new_password="yet-another-password")
    assert (status, body) == (400, {"message": "Reset token is invalid or has expired"})


async def test_reset_token_as_form_field(api: Api, site: Site, nurse: str) -> None:
    token = await reset_tokens.issue(site.services.db, row(site, nurse), 24)
    assert (await change(api, None, new_password=NEW, reset_token=token))[0] == 200
    await sign_in(api, NEW)


@pytest.mark.parametrize(("password", "message"), POLICY)
async def test_reset_token_change_enforces_the_policy_without_using_the_token(
    api: Api, site: Site, nurse: str, password: str, message: str
) -> None:
    token = await reset_tokens.issue(site.services.db, row(site, nurse), 24)
    assert await change(api, token, new_password=password) == (400, {"message": message})
    assert (await change(api, token, new_password=NEW))[0] == 200


async def test_reset_token_expires(api: Api, site: Site, nurse: str) -> None:
    token = await reset_tokens.issue(site.services.db, row(site, nurse), 2)
    clock.advance(timedelta(hours=2, seconds=1))
    status, body = await change(api, token, new_password=NEW)
    assert (status, body) == (400, {"message": "Reset token is invalid or has expired"})
    await sign_in(api)  # the password did not change


async def test_reset_token_lives_at_most_a_week(api: Api, site: Site, nurse: str) -> None:
    token = await reset_tokens.issue(site.services.db, row(site, nurse), 10_000)
    clock.advance(timedelta(hours=167, minutes=59))
    reset_tokens.check(site.services.db, token)  # still valid
    clock.advance(timedelta(minutes=2))
    assert (await change(api, token, new_password=NEW))[0] == 400


async def test_unknown_reset_token_and_suspended_user(api: Api, site: Site, nurse: str) -> None:
    assert (await change(api, "no-such-reset-token", new_password=NEW))[0] == 400
    token = await reset_tokens.issue(site.services.db, row(site, nurse), 24)
    await site.services.db.write(lambda c: users.patch(c, nurse, {"is_active": 0}))
    assert (await change(api, token, new_password=NEW))[0] == 400


async def test_a_new_password_voids_outstanding_reset_tokens(
    api: Api, site: Site, nurse: str
) -> None:
    token = await reset_tokens.issue(site.services.db, row(site, nurse), 24)
    session = await sign_in(api)
    status, _ = await change(api, session["access_token"], old_password=PASSWORD, new_password=NEW)
    assert status == 200
    assert (await change(api, token, new_password="another-new-password"))[0] == 400
