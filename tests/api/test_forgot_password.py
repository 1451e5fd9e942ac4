"""POST /v2/auth/forgot-password: one answer for every account, known or not; a reset
token by mail for an active user, a new invitation for one who never chose a password."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest

from edge.app import Site
from edge.kernel import clock
from storage import outbox, users
from tests.conftest import Api
from tests.tenants import PASSWORD, Tenant

ANSWER = (200, {"message": "If an account matches, a message is on its way to it"})


async def forgot(api: Api, **form: str) -> tuple[int, Any]:
    return await api.call("POST", "/v2/auth/forgot-password", data=form)


def mails(site: Site, purpose: str) -> list[dict[str, Any]]:
    return site.services.db.read(lambda c: outbox.by_purpose(c, purpose))


def secret_in(mail: dict[str, Any]) -> str:
    """The token or temporary password: the message's one indented line."""
    found = re.search(r"^    (\S+)$", mail["body_text"], re.M)
    assert found is not None, mail["body_text"]
    return found.group(1)


async def test_known_and_unknown_accounts_get_the_same_answer(
    api: Api, site: Site, tenant: Tenant
) -> None:
    await tenant.add_user("nightnurse", phone_number="+15550102000", phone_folded="+15550102000")
    answers = [
        await forgot(api, client_id="clinic", username="nightnurse"),
        await forgot(api, client_id="clinic", username="nobody-here"),
        await forgot(api, client_id="clinic", email="NIGHTNURSE@clinic.test"),
        await forgot(api, client_id="clinic", email="nobody@clinic.test"),
        await forgot(api, client_id="clinic", phone_number="+15550102000"),
        await forgot(api, client_id="clinic", phone_number="+15550109999"),
    ]
    assert answers == [ANSWER] * 6
    sent = mails(site, "account_recovery")
    assert [m["recipient"] for m in sent] == ["nightnurse@clinic.test"] * 3
    assert mails(site, "invitation") == []


async def test_the_mailed_token_resets_the_password_once(
    api: Api, site: Site, tenant: Tenant
) -> None:
    await tenant.add_user("nightnurse")
    assert await forgot(api, client_id="clinic", username="nightnurse") == ANSWER
    (mail,) = mails(site, "account_recovery")
    assert "24 hours" in mail["body_text"]
    token = secret_in(mail)
    assert len(token) >= 43
    status, _ = await api.call(
        "PUT", "/v2/auth/password", token, data={"new_password": "chosen-by-me-1"}
    )
    assert status == 200
    await api.token("nightnurse", "chosen-by-me-1", client_id="clinic")
    status, _ = await api.call(
        "PUT", "/v2/auth/password", token, data={"new_password": "chosen-by-me-2"}
    )
    assert status == 400


async def test_the_token_lives_as_long_as_the_org_setting_says(
    api: Api, site: Site, tenant: Tenant
) -> None:
    await tenant.add_user("nightnurse")
    settings = json.dumps({"reset_token_expire_hours": 2})
    await site.services.db.write(
        lambda c: c.execute("UPDATE orgs SET settings = ? WHERE id = ?", (settings, tenant.org_id))
    )
    await forgot(api, client_id="clinic", username="nightnurse")
    (mail,) = mails(site, "account_recovery")
    assert "2 hours" in mail["body_text"]
    clock.advance(timedelta(hours=2, seconds=1))
    status, body = await api.call(
        "PUT", "/v2/auth/password", secret_in(mail), data={"new_password": "chosen-by-me-1"}
    )
    assert (status, body) == (400, {"message": "Reset token is invalid or has expired"})


async def test_a_user_without_a_first_password_gets_the_invitation_again(
    api: Api, site: Site, tenant: Tenant
) -> None:
    user_id = await tenant.add_user("newbie", has_temporary_password=1, new_password_required=1)
    before = len(mails(site, "invitation"))
    assert await forgot(api, client_id="clinic", email="newbie@clinic.test") == ANSWER
    invitations = mails(site, "invitation")
    assert len(invitations) == before + 1
    assert mails(site, "account_recovery") == []
    mail = invitations[-1]
    assert mail["recipient"] == "newbie@clinic.test"
    row = site.services.db.read(lambda c: users.get(c, user_id))
    assert row is not None and row["has_temporary_password"] == 1
    # The new temporary password replaces the old one.
    status, _ = await api.call(
        "POST",
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": "newbie",
            "password": PASSWORD,
            "client_id": "clinic",
        },
    )
    assert status == 400
    status, _ = await api.call(
        "POST",
        "/v2/auth/token",
        data={
            "grant_type": "password",
            "username": "newbie",
            "password": secret_in(mail),
            "client_id": "clinic",
        },
    )
    assert status == 200  # the NEW_PASSWORD_REQUIRED challenge


async def test_suspended_users_get_nothing_but_the_same_answer(
    api: Api, site: Site, tenant: Tenant
) -> None:
    await tenant.add_user("gone", is_active=0)
    assert await forgot(api, client_id="clinic", username="gone") == ANSWER
    assert mails(site, "account_recovery") == []


@pytest.mark.parametrize(
    ("form", "answer"),
    [
        ({"username": "x"}, (406, {"message": "client_id: is required"})),
        (
            {"client_id": "clinic"},
            (400, {"message": "username, email or phone_number is required"}),
        ),
        (
            {"client_id": "no-such-org", "username": "x"},
            (400, {"message": "client_id: does not name an organization"}),
        ),
    ],
)
async def test_bad_requests(
    api: Api, tenant: Tenant, form: dict[str, str], answer: tuple[int, Any]
) -> None:
    assert await forgot(api, **form) == answer


@pytest.mark.parametrize(
    ("org", "project", "hours"),
    [
        ({}, None, 24),
        ({"reset_token_expire_hours": 5}, None, 5),
        ({"reset_token_expire_hours": 5}, {}, 5),
        ({"reset_token_expire_hours": 5}, {"reset_token_expire_hours": 7}, 7),
        ({"reset_token_expire_hours": 500}, None, 168),
    ],
)
def test_token_lifetime_comes_from_the_project_then_the_org(
    org: dict[str, int], project: dict[str, int] | None, hours: int
) -> None:
    from edge.auth.reset_tokens import hours_for

    as_row = None if project is None else {"settings": project}
    assert hours_for({"settings": org}, as_row) == hours  # type: ignore[arg-type]
