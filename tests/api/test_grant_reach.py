"""Who may give access to whom: an admin gives access (to its group, its project, its role)
only to accounts and roles it can read, since the grant makes it their admin. An account
it cannot read is a 404, as one that does not exist; no setting widens this.

The tables cross each kind of caller (group admin, a device that is a group admin,
project admin, org admin, plain user) with grantees it can read and grantees it cannot;
denials sit next to grants. The takeover chain the rule stops (add a device or a user to
your group, then reset its key, set its IoT scopes, open a tunnel, change its e-mail) is
shown refused step by step.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.world import World

GRANTEES = ("member", "loner", "device_member", "device_loner", "device_gemini", "nurses", "techs")


@dataclass
class Reach:
    """The groups of these tests: Annex (what the admins read: member, device_member and
    Nurses are in it) and Annex 2 (empty; where they add), both administered by
    group_admin and by device_keeper, a device."""

    annex: str
    annex2: str


async def arrange(world: World) -> Reach:
    await world.add_device("device_gemini", project_id=world.second_project_id)
    keeper = await world.add_device("device_keeper")
    annex = await world.new_group(name="Annex")
    annex2 = await world.new_group(name="Annex 2")
    for group in (annex, annex2):
        await world.grant("group", group, world.id("group_admin"), is_admin=True)
        await world.grant("group", group, keeper, "device", is_admin=True)
    await world.grant("group", annex, world.id("member"))
    await world.grant("group", annex, world.id("device_member"), "device")
    await world.grant("group", annex, world.org_role_id, "role")
    return Reach(annex, annex2)


def grantee(world: World, name: str) -> str:
    roles = {"nurses": world.org_role_id, "techs": world.project_role_id}
    return roles[name] if name in roles else world.id(name)


# (caller, group it adds to) -> status per grantee, in the order of GRANTEES
GROUP_ADDS: dict[str, tuple[str, tuple[int, ...]]] = {
    # reads member, device_member and Nurses (Ward, Annex); not the others
    "group_admin": ("annex2", (201, 404, 201, 404, 404, 201, 404)),
    "device_keeper": ("annex2", (201, 404, 201, 404, 404, 201, 404)),
    # admin of Lab through Apollo: reads Apollo's accounts and roles; Gemini's device is
    # refused for its home project first
    "project_admin": ("lab", (201, 404, 201, 404, 400, 404, 201)),
    "org_admin": ("annex2", (201, 201, 201, 201, 201, 201, 201)),
    "plain": ("annex2", (404,) * 7),  # the group itself is unknown to it
    "device_member": ("annex2", (404,) * 7),
}


def group_rows() -> list[object]:
    return [
        pytest.param(who, target, statuses[i], id=f"{who}-{target}")
        for who, (_, statuses) in GROUP_ADDS.items()
        for i, target in enumerate(GRANTEES)
    ]


@pytest.mark.parametrize(("who", "target", "expected"), group_rows())
async def test_an_admin_adds_to_its_group_only_what_it_can_read(
    world: World, who: str, target: str, expected: int
) -> None:
    reach = await arrange(world)
    where = GROUP_ADDS[who][0]
    group = {"annex2": reach.annex2, "lab": world.project_group_id}[where]
    target_id = grantee(world, target)
    status, body = await world.call(who, "POST", f"/v2/groups/{group}/access/{target_id}", json={})
    assert status == expected, body
    if expected != 201:
        assert set(body) == {"message"}
        status, _ = await world.call("org_admin", "GET", f"/v2/groups/{group}/access/{target_id}")
        assert status == 404  # nothing was written
    if expected == 404 and who in ("group_admin", "project_admin", "device_keeper"):
        assert body["message"].startswith("Grantee not found")  # as if it did not exist


@pytest.mark.parametrize(
    ("who", "target", "expected"),
    [
        ("project_admin", "member", 201),  # home project Apollo
        ("project_admin", "device_member", 201),
        ("project_admin", "loner", 404),  # org-level, in nothing the admin holds
        ("project_admin", "device_loner", 404),
        ("project_admin", "techs", 201),
        ("project_admin", "nurses", 404),
        ("org_admin", "loner", 201),
        ("org_admin", "device_loner", 201),
        ("group_admin", "member", 404),  # Apollo is unknown to it
        ("plain", "member", 404),
    ],
)
async def test_an_admin_gives_project_access_only_to_what_it_can_read(
    world: World, who: str, target: str, expected: int
) -> None:
    await arrange(world)
    path = f"/v2/projects/{world.project_id}/access/{grantee(world, target)}"
    status, body = await world.call(who, "POST", path, json={"can_read": True})
    assert status == expected, body


@pytest.mark.parametrize(
    ("who", "target", "expected"),
    [
        ("project_admin", "member", 201),
        ("project_admin", "device_member", 201),
        ("project_admin", "loner", 404),
        ("project_admin", "device_loner", 404),
        ("org_admin", "loner", 201),
        ("org_admin", "device_loner", 201),
        ("group_admin", "member", 404),  # Technicians is unknown to it
        ("plain", "member", 404),
    ],
)
async def test_a_role_is_given_only_to_accounts_the_admin_can_read(
    world: World, who: str, target: str, expected: int
) -> None:
    await arrange(world)
    path = f"/v2/roles/{world.project_role_id}/access/{grantee(world, target)}"
    status, body = await world.call(who, "POST", path, json={})
    assert status == expected, body


async def test_the_takeover_chain_is_refused_at_every_step(world: World) -> None:
    """A group admin added a device it could not see to its group and became its admin:
    reset its key (cutting the real device off), set its IoT scopes to the whole org,
    opened tunnels; and changed a user's e-mail, then took the account over through
    forgotten-password. Each step is refused now, and the device still signs in."""
    await arrange(world)
    ward, device, user = world.org_group_id, world.id("device_loner"), world.id("loner")
    for account in (device, user):
        where = f"/v2/groups/{ward}/access/{account}"
        status, _ = await world.call("group_admin", "POST", where, json={})
        assert status == 404
    steps = [
        ("POST", f"/v2/devices/{device}/reset-api-key", None),
        ("PATCH", f"/v2/devices/{device}", {"iot_scopes": {"/": {"can_subscribe": True}}}),
        ("POST", f"/v2/devices/{device}/tunnels", {"services": ["SSH"]}),
        ("PATCH", f"/v2/users/{user}", {"email": "mine@attacker.test"}),
    ]
    for method, path, body in steps:
        status, reply = await world.call("group_admin", method, path, json=body)
        assert status == 404, (path, reply)
    status, _ = await world.call("device_loner", "GET", f"/v2/devices/{device}")
    assert status == 200  # its key still works
    assert world.device("device_loner").iot_scopes == {}
    status, reply = await world.call("org_admin", "GET", f"/v2/users/{user}")
    assert reply["user"]["email"] == world.email("loner")


async def test_turning_on_access_to_an_account_out_of_sight_is_refused(world: World) -> None:
    """Access an org admin left inactive: the group admin may change it while it stays
    off, not turn it on (that would make it the account's admin)."""
    ward, loner = world.org_group_id, world.id("loner")
    await world.grant("group", ward, loner)
    path = f"/v2/groups/{ward}/access/{loner}"
    assert (await world.call("org_admin", "PATCH", path, json={"is_active": False}))[0] == 200
    status, body = await world.call("group_admin", "PATCH", path, json={"is_active": True})
    assert status == 404 and body["message"].startswith("Grantee not found"), body
    assert (await world.call("group_admin", "PATCH", path, json={"tags": ["x"]}))[0] == 200
    assert (await world.call("group_admin", "GET", f"/v2/users/{loner}"))[0] == 404
    assert (await world.call("org_admin", "PATCH", path, json={"is_active": True}))[0] == 200
    assert (await world.call("group_admin", "GET", f"/v2/users/{loner}"))[0] == 200


async def test_project_permissions_on_a_user_need_a_user_the_admin_can_read(
    world: World,
) -> None:
    """PATCH /v2/users/{id} with only `project_permissions` asked for no standing towards
    the user: a project admin gave its project to any user of the org (and then read it),
    and to users of other projects."""
    loner, member = world.id("loner"), world.id("member")
    token = await world.token("project_admin", project_id=world.project_id)
    body = {"project_permissions": {"can_read": True}}
    status, reply = await world.api.call("PATCH", f"/v2/users/{loner}", token, json=body)
    assert (status, reply) == (404, {"message": "User not found"})
    assert (await world.api.call("GET", f"/v2/users/{loner}", token))[0] == 404
    status, _ = await world.api.call("PATCH", f"/v2/users/{member}", token, json=body)
    assert status == 200  # home project Apollo: its admin reads it
    token = await world.token("org_admin", project_id=world.project_id)
    gemini = world.id("gemini_user")
    status, reply = await world.api.call("PATCH", f"/v2/users/{gemini}", token, json=body)
    message = "project_permissions: this user belongs to another project"
    assert (status, reply) == (400, {"message": message})


async def test_project_permissions_on_a_device_follow_the_users_home_project_rule(
    world: World,
) -> None:
    """A patch's project access goes to the session's project for a device as for a user,
    and only to the device's home project: a device of Gemini took Apollo's project access
    from an Apollo session (devices passed their own project to the rule, users the
    session's)."""
    created = await world.call(
        "org_admin",
        "POST",
        "/v2/devices",
        json={"name": "Far", "project_id": world.second_project_id},
    )
    assert created[0] == 201, created
    far = created[1]["device"]["id"]
    token = await world.token("org_admin", project_id=world.project_id)
    body = {"project_permissions": {"can_read": True}}
    status, reply = await world.api.call("PATCH", f"/v2/devices/{far}", token, json=body)
    message = "project_permissions: this device belongs to another project"
    assert (status, reply) == (400, {"message": message})
    member = world.id("device_member")  # home project Apollo
    status, reply = await world.api.call("PATCH", f"/v2/devices/{member}", token, json=body)
    assert status == 200, reply
