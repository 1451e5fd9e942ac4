"""edge/accounts/user_kind.py: what users have that devices do not. Usernames (at least
three characters, never shaped like a phone number), logins folded and unique in an org,
the password a new user starts with, what the anonymous view hides, and the admin-only
fields of the user's view."""

from __future__ import annotations

import pytest

from edge.accounts import user_kind
from edge.accounts.kind import Relation
from edge.accounts.user_kind import USER, AccountTaken, initial_password
from edge.auth import hashing
from edge.kernel.errors import ValidationError
from tests.edge.rooms import Room

PASSWORD = "a-long-enough-password-1"


@pytest.mark.parametrize("name", ["ab", "+15550102000", "0015550102000", "bad\u202ename", ""])
def test_a_bad_username_is_refused(name: str) -> None:
    with pytest.raises(ValidationError) as refused:
        user_kind.username("username", name)
    assert refused.value.field == "username"


def test_logins_are_folded_and_phone_numbers_cleaned() -> None:
    columns = user_kind.columns(
        {"email": "Ada@X.test", "username": "Ada", "phone_number": "+1 555 010 2000"}
    )
    assert (columns["email"], columns["email_folded"]) == ("Ada@X.test", "ada@x.test")
    assert columns["username_folded"] == "ada"
    assert columns["phone_number"] == columns["phone_folded"] == "+15550102000"
    assert user_kind.logins(columns) == {
        "email": "ada@x.test",
        "username": "ada",
        "phone_number": "+15550102000",
    }
    with pytest.raises(ValidationError) as refused:
        user_kind.columns({"first_name": "Ada\u0000"})
    assert refused.value.field == "first_name"


async def test_a_login_names_one_user_of_an_org(room: Room) -> None:
    org_id, other = await room.org(), await room.org("Other")
    admin = await room.admin(org_id)
    users = room.services.users
    await users.create(admin, {"email": "ada@x.test", "password": PASSWORD})
    for body in ({"email": "ADA@x.test"}, {"email": "b@x.test", "username": "Ada@X.test"}):
        with pytest.raises(AccountTaken):
            await users.create(admin, {**body, "password": PASSWORD})
    await users.create(await room.admin(other), {"email": "ada@x.test", "password": PASSWORD})


async def test_a_new_user_starts_with_one_password() -> None:
    permanent = await initial_password({"password": PASSWORD}, "ada")
    assert not permanent.temporary and permanent.plain == ""
    assert await hashing.verify(permanent.hash, PASSWORD)
    temporary = await initial_password({"temp_password": PASSWORD}, "ada")
    assert temporary.temporary and temporary.plain == PASSWORD
    generated = await initial_password({}, "ada")
    assert generated.temporary and len(generated.plain) >= 18
    assert PASSWORD not in repr(temporary)
    with pytest.raises(ValidationError):
        await initial_password({"password": PASSWORD, "temp_password": PASSWORD}, "ada")
    with pytest.raises(ValidationError) as refused:
        await initial_password({"temp_password": "ada"}, "ada")
    assert refused.value.field == "temp_password"


def test_the_anonymous_view_hides_personal_fields_and_custom_attributes() -> None:
    names = {"email", "first_name", "username", "created_date", "custom_attributes.shift"}
    assert USER.hidden(names) == ["custom_attributes.shift", "email", "first_name"]


def test_the_admins_view_adds_the_password_flags() -> None:
    row = user_kind.new_user("org", "actor", {"email": "a@x.test", "has_temporary_password": True})
    assert row.username == "a@x.test" and row.username_folded == "a@x.test"
    plain = Relation(False, False, False, True, False, False)
    admin = Relation(False, False, True, True, True, True)
    assert not set(user_kind.ADMIN_ONLY) & set(USER.fields(row, plain, {}))
    shown = USER.fields(row, admin, {})
    assert shown["has_temporary_password"] is True and shown["is_active"] is True
