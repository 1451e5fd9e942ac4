"""Sign-in: staff and org users, password and refresh grants, revocation and expiry."""

from __future__ import annotations

from datetime import timedelta

import pytest

from edge.app import Site
from edge.kernel import clock
from edge.kernel.principal import Principal
from storage import staff
from tests.conftest import STAFF_EMAIL, STAFF_PASSWORD, Api

ADMIN_EMAIL = "Boss@Clinic.test"
ADMIN_PASSWORD = "clinic-admin-pass"


async def make_org(site: Site, **body: object) -> str:
    owner = site.services.db.read(staff.first)
    return await site.services.orgs.create(
        Principal("staff", owner["id"], None),
        {"name": "Clinic", "alias": "clinic", **body},
        admin={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD},
    )


async def sign_in(api: Api, **form: str) -> tuple[int, dict[str, object]]:
    status, body = await api.call("POST", "/v2/auth/token", data={"grant_type": "password", **form})
    return status, body


@pytest.mark.parametrize("login", ["admin", "ADMIN", STAFF_EMAIL, STAFF_EMAIL.upper()])
async def test_staff_signs_in_by_username_or_email_any_case(api: Api, login: str) -> None:
    status, body = await sign_in(api, username=login, password=STAFF_PASSWORD)
    assert status == 201
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert isinstance(body["refresh_token"], str) and len(body["refresh_token"]) >= 40


async def test_wrong_password_and_unknown_account_answer_alike(api: Api) -> None:
    wrong = await sign_in(api, username="admin", password="not-the-password")
    unknown = await sign_in(api, username="nobody", password="not-the-password")
    assert wrong == unknown == (400, {"message": "Incorrect username or password"})


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"username": "admin"}, "username and password are required"),
        ({"password": "x"}, "username and password are required"),
    ],
)
async def test_incomplete_password_grant_is_400(
    api: Api, form: dict[str, str], message: str
) -> None:
    assert await sign_in(api, **form) == (400, {"message": message})


async def test_unknown_grant_type_is_400(api: Api) -> None:
    status, body = await api.call("POST", "/v2/auth/token", data={"grant_type": "magic"})
    assert (status, body) == (400, {"message": "grant_type: must be password or refresh_token"})


async def test_missing_grant_type_is_406(api: Api) -> None:
    status, body = await api.call("POST", "/v2/auth/token", data={"username": "admin"})
    assert (status, body) == (406, {"message": "grant_type: is required"})


async def test_token_response_is_not_cached(api: Api) -> None:
    response = await api.client.post(
        "/v2/auth/token",
        data={"grant_type": "password", "username": "admin", "password": STAFF_PASSWORD},
    )
    assert response.headers["Cache-Control"] == "no-store"


async def test_refresh_grant_issues_a_working_access_token(api: Api) -> None:
    _, first = await sign_in(api, username="admin", password=STAFF_PASSWORD)
    status, body = await api.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "refresh_token", "refresh_token": first["refresh_token"]},
    )
    assert status == 201 and "refresh_token" not in body
    status, _ = await api.call("GET", "/v2/orgs", str(body["access_token"]))
    assert status == 200


async def test_bad_refresh_token_is_400(api: Api) -> None:
    status, body = await api.call(
        "POST", "/v2/auth/token", data={"grant_type": "refresh_token", "refresh_token": "nope"}
    )
    assert (status, body) == (400, {"message": "Invalid refresh token"})


async def test_revoke_ends_access_and_refresh_at_once(api: Api) -> None:
    _, tokens = await sign_in(api, username="admin", password=STAFF_PASSWORD)
    access, refresh = str(tokens["access_token"]), str(tokens["refresh_token"])
    status, _ = await api.call(
        "PUT", "/v2/auth/token/revoke", access, data={"refresh_token": refresh}
    )
    assert status == 200
    status, body = await api.call("GET", "/v2/orgs", access)
    assert (status, body) == (401, {"message": "Session has ended; sign in again"})
    status, _ = await api.call(
        "POST", "/v2/auth/token", data={"grant_type": "refresh_token", "refresh_token": refresh}
    )
    assert status == 400


async def test_revoke_without_refresh_token_ends_the_current_session(api: Api) -> None:
    access = await api.token()
    other = await api.token()
    assert (await api.call("PUT", "/v2/auth/token/revoke", access))[0] == 200
    assert (await api.call("GET", "/v2/orgs", access))[0] == 401
    assert (await api.call("GET", "/v2/orgs", other))[0] == 200


async def test_cannot_revoke_someone_elses_refresh_token(api: Api, site: Site) -> None:
    await make_org(site)
    _, mine = await sign_in(api, username="admin", password=STAFF_PASSWORD)
    user = await api.token(ADMIN_EMAIL, ADMIN_PASSWORD, client_id="clinic")
    status, body = await api.call(
        "PUT", "/v2/auth/token/revoke", user, data={"refresh_token": mine["refresh_token"]}
    )
    assert status == 400
    assert (await api.call("GET", "/v2/orgs", str(mine["access_token"])))[0] == 200


async def test_access_token_expires(api: Api) -> None:
    token = await api.token()
    clock.advance(timedelta(minutes=59))
    assert (await api.call("GET", "/v2/orgs", token))[0] == 200
    clock.advance(timedelta(minutes=2))
    status, body = await api.call("GET", "/v2/orgs", token)
    assert (status, body) == (401, {"message": "Access token has expired"})


async def test_refresh_token_expires(api: Api) -> None:
    _, tokens = await sign_in(api, username="admin", password=STAFF_PASSWORD)
    clock.advance(timedelta(hours=24, seconds=1))
    status, _ = await api.call(
        "POST",
        "/v2/auth/token",
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
    )
    assert status == 400


@pytest.mark.parametrize("which", ["clinic", "CLINIC", "org-id"])
async def test_org_user_signs_in_with_alias_or_id(api: Api, site: Site, which: str) -> None:
    org_id = await make_org(site, access_token_expire_hours=2)
    client_id = org_id if which == "org-id" else which
    status, body = await sign_in(
        api, username=ADMIN_EMAIL.lower(), password=ADMIN_PASSWORD, client_id=client_id
    )
    assert status == 201
    assert body["expires_in"] == 2 * 3600  # the org's access_token_expire_hours


async def test_unknown_client_id_is_400(api: Api) -> None:
    status, body = await sign_in(api, username="a", password="b", client_id="no-such-org")
    assert (status, body) == (400, {"message": "client_id: does not name an organization"})


async def test_staff_cannot_sign_in_as_an_org_user(api: Api, site: Site) -> None:
    await make_org(site)
    status, _ = await sign_in(api, username="admin", password=STAFF_PASSWORD, client_id="clinic")
    assert status == 400


async def test_users_of_a_suspended_org_cannot_sign_in(
    api: Api, site: Site, staff_token: str
) -> None:
    org_id = await make_org(site)
    status, _ = await api.call(
        "PATCH", f"/v2/orgs/{org_id}", staff_token, json={"is_active": False}
    )
    assert status == 200
    status, body = await sign_in(
        api, username=ADMIN_EMAIL, password=ADMIN_PASSWORD, client_id="clinic"
    )
    assert (status, body) == (403, {"message": "This account is suspended"})


async def test_deleting_an_org_ends_its_users_sessions(
    api: Api, site: Site, staff_token: str
) -> None:
    org_id = await make_org(site)
    user = await api.token(ADMIN_EMAIL, ADMIN_PASSWORD, client_id="clinic")
    assert (await api.call("GET", "/v2/orgs", user))[0] == 403
    assert (await api.call("DELETE", f"/v2/orgs/{org_id}", staff_token))[0] == 200
    assert (await api.call("GET", "/v2/orgs", user))[0] == 401


async def test_staff_scope_accepts_the_org_alias(api: Api, site: Site) -> None:
    org_id = await make_org(site)
    scoped = await api.token(scope="CLINIC")
    status, body = await api.call("GET", f"/v2/orgs/{org_id}", scoped)
    assert status == 200 and body["org"]["alias"] == "clinic"
    status, body = await sign_in(api, username="admin", password=STAFF_PASSWORD, scope="elsewhere")
    assert (status, body) == (400, {"message": "scope: does not name an organization"})


async def test_org_users_sign_in_by_phone_number_too(api: Api, site: Site) -> None:
    await make_org(site)
    admin = await api.token(ADMIN_EMAIL, ADMIN_PASSWORD, client_id="clinic")
    body = {
        "email": "nurse@clinic.test",
        "username": "nurse",
        "phone_number": "+1 555 000 1234",
        "password": "nurse-password-1",
    }
    status, reply = await api.call("POST", "/v2/users", admin, json=body)
    assert status == 201, reply
    for login in ("nurse", "NURSE@clinic.test", "+15550001234"):
        status, _ = await sign_in(
            api, username=login, password="nurse-password-1", client_id="clinic"
        )
        assert status == 201, login


async def test_the_orgs_login_fields_decide_what_username_may_be(
    api: Api, site: Site, staff_token: str
) -> None:
    org_id = await make_org(site)
    admin = await api.token(ADMIN_EMAIL, ADMIN_PASSWORD, client_id="clinic")
    body = {"email": "nurse@clinic.test", "username": "nurse", "password": "nurse-password-1"}
    assert (await api.call("POST", "/v2/users", admin, json=body))[0] == 201
    form = {"password": "nurse-password-1", "client_id": "clinic"}
    assert (await sign_in(api, username="nurse", **form))[0] == 201
    status, _ = await api.call(
        "PATCH", f"/v2/orgs/{org_id}", staff_token, json={"allowed_login_fields": ["email"]}
    )
    assert status == 200
    assert (await sign_in(api, username="nurse@clinic.test", **form))[0] == 201
    assert await sign_in(api, username="nurse", **form) == (
        400,
        {"message": "Incorrect username or password"},
    )
