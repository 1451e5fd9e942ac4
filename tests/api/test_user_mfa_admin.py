"""An admin removing another user's MFA and starting their account recovery: role by role,
denials next to grants."""

from __future__ import annotations

import pytest

from storage import outbox
from tests.sign_in import enroll_sms, enroll_software, login, require_mfa, user
from tests.world import World, target_table

# Status per caller for each target user, in the order of TARGETS (member, loner, boss).
# Those who may update a user may do this to them, but only admins of that user: readers who
# are not admins are refused, callers who cannot see the user get 404, and group and project
# admins never reach an org admin (boss).
EXPECTED = {
    "staff": (200, 200, 200),
    "staff_unscoped": (403, 403, 403),
    "org_admin": (200, 200, 200),
    "project_admin": (200, 404, 403),  # member's home project is theirs
    "role_admin": (200, 404, 403),
    "org_user_perms": (403, 403, 403),
    "org_group_role_perms": (404, 404, 404),
    "org_project_perms": (404, 404, 404),
    "org_device_perms": (404, 404, 404),
    "project_user_perms": (403, 404, 403),
    "project_group_role_perms": (404, 404, 404),
    "project_device_perms": (404, 404, 404),
    "project_reader": (404, 404, 404),
    "project_updater": (404, 404, 404),
    "group_admin": (200, 404, 403),  # member is in their group
    "group_user_perms": (403, 404, 403),
    "group_editor": (404, 404, 404),
    "group_device_perms": (404, 404, 404),
    "member": (403, 404, 404),  # themselves: their own endpoints are under /account
    "holder": (404, 404, 404),
    "owner": (404, 404, 404),
    "plain": (404, 404, 404),
    "gemini_user": (404, 404, 404),
    "device_member": (404, 404, 404),  # a device, not the user member
    "device_loner": (404, 404, 404),
    "device_boss": (200, 200, 200),
    "device_plain": (404, 404, 404),
    "other_admin": (404, 404, 404),
    "anonymous": (401, 401, 401),
}
ROWS = target_table(EXPECTED)


@pytest.mark.parametrize("kind", ["software", "sms"])
@pytest.mark.parametrize(("who", "target", "expected"), ROWS)
async def test_remove_user_mfa_by_role(
    world: World, who: str, target: str, expected: int, kind: str
) -> None:
    site, user_id = world.site, world.id(target)
    await (enroll_software if kind == "software" else enroll_sms)(site, user_id)
    status, body = await world.call(who, "DELETE", f"/v2/users/{user_id}/mfa/{kind}")
    assert status == expected, body
    assert bool(user(site, user_id)[f"{kind}_mfa_enabled"]) == (status != 200)


@pytest.mark.parametrize(("who", "target", "expected"), ROWS)
async def test_recovery_mail_by_role(world: World, who: str, target: str, expected: int) -> None:
    status, body = await world.call(who, "POST", f"/v2/users/{world.id(target)}/recovery")
    assert status == expected, body
    mails = world.site.services.db.read(lambda c: outbox.by_purpose(c, "account_recovery"))
    assert len(mails) == (1 if status == 200 else 0)
    if mails:
        assert mails[0]["recipient"] == world.email(target)


async def test_recovery_token_resets_the_password(world: World) -> None:
    status, _ = await world.call("org_admin", "POST", f"/v2/users/{world.id('member')}/recovery")
    assert status == 200
    mail = world.site.services.db.read(lambda c: outbox.by_purpose(c, "account_recovery"))[0]
    token = next(w for w in mail["body_text"].split() if len(w) >= 40)
    form = {"reset_token": token, "new_password": "recovered-pass-1"}
    status, body = await world.api.call("PUT", "/v2/auth/password", data=form)
    assert status == 200, body


async def test_removing_required_mfa_revokes_the_users_tokens(world: World) -> None:
    site, member = world.site, world.id("member")
    await enroll_software(site, member)
    await require_mfa(site, world.tenant.org_id)
    token = await world.token("member")
    assert (await world.api.call("GET", f"/v2/users/{member}", token))[0] == 200
    status, _ = await world.call("org_admin", "DELETE", f"/v2/users/{member}/mfa/software")
    assert status == 200
    assert (await world.api.call("GET", f"/v2/users/{member}", token))[0] == 401
    status, body = await login(world.tenant, "member")
    assert status == 200 and body["challenge"] == "MFA_SETUP"


async def test_removing_mfa_without_policy_keeps_tokens(world: World) -> None:
    site, member = world.site, world.id("member")
    await enroll_software(site, member)
    token = await world.token("member")
    assert (await world.call("org_admin", "DELETE", f"/v2/users/{member}/mfa/software"))[0] == 200
    assert (await world.api.call("GET", f"/v2/users/{member}", token))[0] == 200


async def test_admins_use_their_own_endpoints_for_themselves(world: World) -> None:
    status, _ = await world.call(
        "org_admin", "DELETE", f"/v2/users/{world.id('org_admin')}/mfa/sms"
    )
    assert status == 403
