"""An admin stands over an account only while its reach covers everything the account
administers (docs/permissions.md, "Reach covers what an account administers").

The takeover these stop: Apollo's project admin reset the key of an Apollo device that
(through an org-level role) administers Gemini, and with that key was Gemini's admin; Ward's
admin did the same to a member of Ward that administers Pumps; and both removed the MFA,
lifted the sign-in blocks and sent the recovery mail of such users. Each step is refused
now (403: the caller reads the account), nothing changes, and the same steps stay open to
an org admin over these accounts and to the same admins over the plain members of their
project and group.
"""

from __future__ import annotations

from typing import Any

import pytest

from storage import outbox
from tests.sign_in import enroll_sms, enroll_software, user
from tests.world import World

# (scenario, the admin it is shielded from): an account at home in Apollo that holds an
# org-level role administering Gemini; an account in Ward that administers Pumps.
SCENARIOS = {"gemini": "project_admin", "pumps": "group_admin"}
PLAIN = {"user": "member", "device": "device_member"}  # in Apollo and in Ward: in hand
Step = tuple[str, str, dict[str, Any] | None]


async def shielded(world: World, scenario: str, kind: str) -> str:
    """The account of the scenario: a user or a device named `shielded`."""
    if kind == "user":
        account_id = await world.add_user("shielded", project_id=world.project_id)
    else:
        account_id = await world.add_device("shielded", project_id=world.project_id)
    if scenario == "gemini":
        role = await world.new_role(name="Gemini admins")
        await world.grant("project", world.second_project_id, role, "role", is_admin=True)
        await world.grant("role", role, account_id, kind)
    else:
        pumps = await world.new_group(name="Pumps")
        await world.grant("group", world.org_group_id, account_id, kind)
        await world.grant("group", pumps, account_id, kind, is_admin=True)
    return account_id


def steps(kind: str, account_id: str) -> list[Step]:
    """What an admin over the account may do to it (delete aside)."""
    if kind == "device":
        path = f"/v2/devices/{account_id}"
        return [
            ("PATCH", path, {"tags": ["taken"]}),
            ("POST", f"{path}/reset-api-key", None),
            ("POST", f"{path}/reset-mqtt-credentials", None),
            ("POST", f"{path}/tunnels", {"services": ["SSH"]}),
        ]
    path = f"/v2/users/{account_id}"
    return [
        ("PATCH", path, {"email": "taken@attacker.test"}),
        ("POST", f"{path}/recovery", None),
        ("DELETE", f"{path}/mfa/software", None),
        ("DELETE", f"{path}/mfa/sms", None),
        ("DELETE", f"{path}/sign-in-blocks", None),
    ]


async def enrolled(world: World, kind: str, account_id: str) -> None:
    """A user target holds both factors, so their removal shows."""
    if kind == "user":
        await enroll_software(world.site, account_id)
        await enroll_sms(world.site, account_id)


def untouched(world: World, kind: str, account_id: str) -> None:
    if kind == "device":
        assert world.device("shielded").tags == []
        return
    row = user(world.site, account_id)
    assert row["email"] == world.email("shielded")
    assert row["software_mfa_enabled"] and row["sms_mfa_enabled"]
    mails = world.site.services.db.read(lambda c: outbox.by_purpose(c, "account_recovery"))
    assert mails == []


@pytest.mark.parametrize("kind", ["user", "device"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_an_admin_does_not_take_an_account_that_administers_beyond_its_reach(
    world: World, scenario: str, kind: str
) -> None:
    account_id = await shielded(world, scenario, kind)
    await enrolled(world, kind, account_id)
    who = SCENARIOS[scenario]
    noun = "devices" if kind == "device" else "users"
    path = f"/v2/{noun}/{account_id}"
    for method, where, json in [*steps(kind, account_id), ("DELETE", path, None)]:
        status, body = await world.call(who, method, where, json=json)
        assert status == 403, (where, status, body)
        assert set(body) == {"message"}, body
    untouched(world, kind, account_id)
    status, body = await world.call(who, "GET", path)
    assert status == 200, body  # in reach: it reads the account (so 403, not 404, above)
    assert "is_active" not in body[kind]  # the admin's view is for admins over it
    if kind == "device":  # its key was not reset: it still signs in
        assert (await world.call("shielded", "GET", f"/v2/devices/{account_id}"))[0] == 200


@pytest.mark.parametrize("kind", ["user", "device"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("who", ["org_admin", "admin_of_the_plain"])
async def test_admins_still_act_on_the_accounts_in_their_reach(
    world: World, scenario: str, kind: str, who: str
) -> None:
    """An org admin over the shielded account; the project or group admin over the plain
    member of its project or group, which administers nothing."""
    account_id = await shielded(world, scenario, kind)
    if who == "admin_of_the_plain":
        who, account_id = SCENARIOS[scenario], world.id(PLAIN[kind])
    await enrolled(world, kind, account_id)
    for method, path, json in steps(kind, account_id):
        status, body = await world.call(who, method, path, json=json)
        assert status in (200, 201), (path, status, body)
    if kind == "user":
        row = user(world.site, account_id)
        assert row["email"] == "taken@attacker.test"
        assert not row["software_mfa_enabled"] and not row["sms_mfa_enabled"]
