"""The actions of a user's page (suspend, reset MFA, send a recovery e-mail) are offered to
admins over that user alone, whatever rights to update users the caller holds: the console
decides them in one place (api/static/console/js/standing.js) from the server's answers.
Each case also asks the server: a recovery e-mail is accepted exactly where it is offered."""

from __future__ import annotations

import pytest

from tests.browser.console import Console, LiveServer
from tests.tenants import PASSWORD
from tests.world import World

# (caller, target, whether the caller is an admin over the target)
CASES = [
    ("group_user_perms", "group_admin", False),  # group-level user rights, target an admin
    ("group_user_perms", "member", False),  # the same rights over a plain member
    ("org_user_perms", "member", False),  # org-level user rights are no admin's
    ("group_admin", "member", True),  # a member of the admin's group
    ("group_admin", "boss", False),  # an org admin in the group: never under a group admin
    ("project_admin", "member", True),  # home project Apollo
    ("project_admin", "boss", False),  # org admins only under org admins
    ("org_admin", "project_admin", True),
]
LOGINS = {"org_admin": "admin@clinic.test"}  # the others sign in by their user name


@pytest.mark.parametrize(("caller", "target", "admin"), CASES)
def test_the_actions_are_offered_to_admins_over_the_user(
    console: Console, live: LiveServer, world_template: World, caller: str, target: str, admin: bool
) -> None:
    target_id = world_template.users[target]
    console.start()
    login = LOGINS.get(caller, caller)
    console.enter("clinic", login, PASSWORD)
    console.wait_page("overview")
    console.visit("users", target_id)
    offered = sorted(b.get_attribute("id") for b in console.all("#user-page .actions button"))
    assert offered == (["recovery", "suspend"] if admin else []), (caller, target)
    if not admin:
        assert "You may only read this user." in console.text()
    token = live.token_for("clinic", login, PASSWORD)
    status = live.status("POST", f"/v2/users/{target_id}/recovery", token)
    assert (status < 300) is admin, (caller, target, status)
