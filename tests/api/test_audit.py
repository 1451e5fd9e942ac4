"""The audit log: each family of actions is recorded, who may read it, no secrets in it,
retention, and `edge audit list`."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyotp
import pytest

from edge import cli
from edge.app import sweep_once
from edge.auth import reset_tokens
from edge.kernel import audit, clock
from edge.kernel.audit import ACTIONS
from storage import users
from storage.rows import Tx, many
from tests.sign_in import enroll_software, totp, wrong
from tests.tenants import PASSWORD
from tests.world import CALLERS, World, table

NEW_PASSWORD = "a-brand-new-passphrase-7"
KNOWN = {action for family in ACTIONS.values() for action in family}


@pytest.fixture(autouse=True)
async def empty_log(world: World) -> None:
    """Without the events of building the world (its roles, grants, ...)."""
    await world.site.services.db.write(lambda c: c.execute("DELETE FROM audit_events"))


def events(world: World, action: str | None = None) -> list[dict[str, Any]]:
    """Every stored event (or those of one action), oldest first, details decoded."""
    sql = "SELECT * FROM audit_events ORDER BY created_date, id"
    rows = world.site.services.db.read(lambda c: many(c, sql))
    for row in rows:
        row["details"] = json.loads(row["details"])
        assert row["action"] in KNOWN, row["action"]
    return [r for r in rows if action is None or r["action"] == action]


def stored_text(world: World) -> str:
    return json.dumps(events(world))


async def sign_in(world: World, login: str, password: str, **form: str) -> tuple[int, Any]:
    assert world.api is not None
    body = {"grant_type": "password", "username": login, "password": password, **form}
    return await world.api.call("POST", "/v2/auth/token", data=body)


# -- each family ------------------------------------------------------------------------
async def test_sign_ins_failures_and_lockouts(world: World) -> None:
    assert (await sign_in(world, "member", PASSWORD, client_id="clinic"))[0] == 201
    (done,) = events(world, "sign_in")
    assert (done["actor_kind"], done["actor_id"], done["org_id"]) == (
        "user",
        world.id("member"),
        world.tenant.org_id,
    )
    assert done["client"] == "127.0.0.1" and done["request_id"]
    for _ in range(10):  # the pair's lockout comes at the tenth failure
        assert (await sign_in(world, "member", "wrong-password", client_id="clinic"))[0] == 400
        clock.advance(timedelta(minutes=6))  # past each back-off
    failed = events(world, "sign_in_failed")
    assert len(failed) == 10
    assert {(e["actor_kind"], e["target_id"], e["details"]["factor"]) for e in failed} == {
        ("anonymous", world.id("member"), "password")
    }
    (locked,) = events(world, "sign_in_locked")
    assert locked["target_id"] == world.id("member")
    assert locked["details"]["scope"] == "account_from_address"
    assert "wrong-password" not in stored_text(world)


async def test_a_staff_sign_in_and_an_unknown_login(world: World) -> None:
    assert world.api is not None
    await world.api.token()
    (done,) = events(world, "sign_in")
    assert (done["actor_kind"], done["org_id"]) == ("staff", None)
    assert (await sign_in(world, "nobody-such", "guess-1", client_id="clinic"))[0] == 400
    (failed,) = events(world, "sign_in_failed")
    assert failed["target_id"] is None and failed["org_id"] == world.tenant.org_id
    assert "nobody-such" not in stored_text(world)  # a login that names no one is not kept


async def test_a_wrong_mfa_code(world: World) -> None:
    secret = await enroll_software(world.site, world.id("member"))
    status, challenge = await sign_in(world, "member", PASSWORD, client_id="clinic")
    assert status == 200
    assert world.api is not None
    form = {"challenge": "SOFTWARE_TOKEN_MFA", "mfa_code": wrong(totp(secret))}
    status, _ = await world.api.call("POST", "/v2/auth/challenge", challenge["session"], data=form)
    assert status == 401
    (failed,) = events(world, "sign_in_failed")
    assert failed["details"] == {"factor": "mfa"}
    assert failed["target_id"] == world.id("member")


async def test_mfa_changes(world: World) -> None:
    assert world.api is not None
    token = await world.token("member")
    _, secret = await world.api.call("GET", "/v2/auth/mfa/secret-code", token)
    code = pyotp.TOTP(secret["secret_code"]).now()
    status, reply = await world.api.call(
        "PUT", "/v2/auth/mfa/software", token, data={"mfa_code": code}
    )
    assert status == 200
    (enabled,) = events(world, "mfa_enabled")
    assert (enabled["actor_id"], enabled["target_id"], enabled["details"]) == (
        world.id("member"),
        world.id("member"),
        {"method": "software"},
    )
    path = f"/v2/users/{world.id('member')}/mfa/software"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    (disabled,) = events(world, "mfa_disabled")
    assert (disabled["actor_id"], disabled["target_id"]) == (
        world.tenant.admin_id,
        world.id("member"),
    )
    text = stored_text(world)
    assert secret["secret_code"] not in text and reply["recovery_code"] not in text
    assert code not in text


async def test_password_changes(world: World) -> None:
    form = {"old_password": PASSWORD, "new_password": NEW_PASSWORD}
    assert (await world.call("member", "PUT", "/v2/auth/password", data=form))[0] == 200
    (changed,) = events(world, "password_changed")
    assert (changed["actor_id"], changed["target_kind"]) == (world.id("member"), "user")
    assert NEW_PASSWORD not in stored_text(world) and PASSWORD not in stored_text(world)


async def test_a_reset_link_and_lifted_blocks(world: World) -> None:
    assert world.api is not None
    member = world.site.services.db.read(lambda c: users.get(c, world.id("member")))
    assert member is not None
    token = await reset_tokens.issue(world.site.services.db, member, 24)
    form = {"new_password": NEW_PASSWORD}
    assert (await world.api.call("PUT", "/v2/auth/password", token, data=form))[0] == 200
    (reset,) = events(world, "password_reset")
    assert (reset["actor_id"], reset["target_id"], reset["details"]) == (
        world.id("member"),
        world.id("member"),
        {"by": "reset_link"},
    )
    await sign_in(world, "member", "wrong-password", client_id="clinic")
    path = f"/v2/users/{world.id('member')}/sign-in-blocks"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    (cleared,) = events(world, "sign_in_blocks_cleared")
    assert (cleared["actor_id"], cleared["target_id"], cleared["org_id"]) == (
        world.tenant.admin_id,
        world.id("member"),
        world.tenant.org_id,
    )
    text = stored_text(world)
    assert token not in text and NEW_PASSWORD not in text


async def test_admin_changes_to_users_roles_and_access(world: World) -> None:
    body = {"email": "new@clinic.test", "password": NEW_PASSWORD}
    status, made = await world.call("org_admin", "POST", "/v2/users", json=body)
    assert status == 201, made
    user_id = made["user"]["id"]
    assert (
        await world.call("org_admin", "PATCH", f"/v2/users/{user_id}", json={"is_active": False})
    )[0] == 200
    status, role = await world.call("org_admin", "POST", "/v2/roles", json={"name": "Auditors"})
    assert status == 201, role
    role_id = role["role"]["id"]
    assert (await world.call("org_admin", "PATCH", f"/v2/roles/{role_id}", json={"name": "Audit"}))[
        0
    ] == 200
    grant = f"/v2/groups/{world.org_group_id}/access/{user_id}"
    assert (await world.call("org_admin", "POST", grant, json={"is_admin": True}))[0] in (200, 201)
    assert (await world.call("org_admin", "PATCH", grant, json={"is_admin": False}))[0] == 200
    assert (await world.call("org_admin", "DELETE", grant))[0] == 200
    assert (await world.call("org_admin", "DELETE", f"/v2/roles/{role_id}"))[0] == 200
    assert (await world.call("org_admin", "DELETE", f"/v2/users/{user_id}"))[0] == 200
    seen = [(e["action"], e["target_id"]) for e in events(world)]
    access_id = world.org_group_id + user_id[:13]
    assert seen == [
        ("user_created", user_id),
        ("user_updated", user_id),
        ("role_created", role_id),
        ("role_updated", role_id),
        ("access_granted", access_id),
        ("access_updated", access_id),
        ("access_revoked", access_id),
        ("role_deleted", role_id),
        ("user_deleted", user_id),
    ]
    assert all(e["actor_id"] == world.tenant.admin_id for e in events(world))
    created, updated = events(world, "user_created")[0], events(world, "user_updated")[0]
    assert created["details"] == {"fields": ["email"]}  # the password field is not named
    assert updated["details"] == {"fields": ["is_active"], "is_active": False}
    granted = events(world, "access_granted")[0]["details"]
    assert (granted["kind"], granted["grantee_id"], granted["is_admin"]) == ("group", user_id, True)
    assert NEW_PASSWORD not in stored_text(world)
    names = [(e["actor_name"], e["target_name"]) for e in events(world)]
    admin, user = world.tenant.admin_email, "new@clinic.test"
    assert names == [  # as they were when written: the role renamed, the user deleted
        (admin, user),
        (admin, user),
        (admin, "Auditors"),
        (admin, "Audit"),
        (admin, f"{user} on Ward"),
        (admin, f"{user} on Ward"),
        (admin, f"{user} on Ward"),
        (admin, "Audit"),
        (admin, user),
    ]


# -- every security-relevant write of an account, users and devices alike -----------------
ACCOUNT_WRITES = [  # (who, body, details recorded)
    ("user", {"is_active": False}, {"fields": ["is_active"], "is_active": False}),
    ("user", {"email": "moved@clinic.test"}, {"fields": ["email"]}),
    ("user", {"phone_number": "+15550102000"}, {"fields": ["phone_number"]}),
    (
        "user",
        {"org_permissions": {"is_admin": True}},
        {"fields": ["org_permissions"], "org_admin": True},
    ),
    ("device", {"is_active": False}, {"fields": ["is_active"], "is_active": False}),
    (
        "device",
        {"org_permissions": {"is_admin": True}},
        {"fields": ["org_permissions"], "org_admin": True},
    ),
    (
        "device",
        {"org_permissions": {"is_admin": False}},
        {"fields": ["org_permissions"], "org_admin": False},
    ),
    (
        "device",
        {"iot_scopes": {"telemetry/": {"can_subscribe": True}}},
        {"fields": ["iot_scopes"], "iot_scopes": ["/telemetry"]},
    ),
    ("device", {"owner_id": None}, {"fields": ["owner_id"]}),
    ("device", {"name": "Pump 2"}, {"fields": ["name"]}),
]


@pytest.mark.parametrize(
    ("kind", "body", "details"),
    [pytest.param(*row, id=f"{row[0]}-{next(iter(row[1]))}") for row in ACCOUNT_WRITES],
)
async def test_every_change_of_an_account_is_recorded(
    world: World, kind: str, body: dict[str, Any], details: dict[str, Any]
) -> None:
    """Suspending a device, making it an org admin or changing its iot_scopes left no
    record (only resets and deletion did); users and devices now alike."""
    target = world.id("loner" if kind == "user" else "device_loner")
    path = f"/v2/{kind}s/{target}"
    status, reply = await world.call("org_admin", "PATCH", path, json=body)
    assert status == 200, reply
    (event,) = events(world)
    assert (event["action"], event["target_kind"], event["target_id"]) == (
        f"{kind}_updated",
        kind,
        target,
    )
    assert event["details"] == details
    assert (event["actor_id"], event["actor_name"]) == (
        world.tenant.admin_id,
        world.tenant.admin_email,
    )


async def test_devices_made_restored_and_refused_writes(world: World) -> None:
    body = {"name": "Pump", "iot_scopes": {"alarms/": {"can_publish": True}}}
    status, made = await world.call("org_admin", "POST", "/v2/devices", json=body)
    assert status == 201, made
    device = made["device"]["id"] if "device" in made else made["id"]
    (created,) = events(world, "device_created")
    assert (created["target_id"], created["target_name"]) == (device, "Pump")
    assert created["details"] == {"fields": ["iot_scopes", "name"], "iot_scopes": ["/alarms"]}
    for secret in _strings(made):  # the new key, certificate and private key
        if len(secret) >= 40:
            assert secret not in stored_text(world)
    taken = {"name": "device_member"}  # a conflict: the write fails, and so does its record
    status, _ = await world.call("org_admin", "PATCH", f"/v2/devices/{device}", json=taken)
    assert status == 409 and events(world, "device_updated") == []
    loner = world.id("device_loner")
    assert (await world.call("org_admin", "DELETE", f"/v2/devices/{loner}"))[0] == 200
    assert (await world.call("org_admin", "POST", f"/v2/trash/{loner}/restore"))[0] == 200
    (restored,) = events(world, "device_restored")
    assert (restored["target_id"], restored["target_name"]) == (loner, "device_loner")
    (deleted,) = events(world, "device_deleted")
    assert deleted["target_name"] == "device_loner"  # gone when written: from the record


async def test_twin_desired_changes_are_recorded_without_their_values(world: World) -> None:
    """A person's (or program's) change of `desired` is an event with who, the device and
    the version it made, never the values; a device's `reported` is not recorded (volume:
    docs/audit.md), nor is a refused change (version conflict)."""
    device = world.id("device_member")
    path = f"/v2/devices/{device}/twin"
    body = {"desired": {"pin_hint": "4711-secret"}}
    status, reply = await world.call("org_admin", "PATCH", path, json=body)
    assert status == 200, reply
    stale = {"desired": {"mode": "eco"}, "version": 0}
    assert (await world.call("org_admin", "PATCH", path, json=stale))[0] == 409
    status, reply = await world.call("device_member", "PATCH", path, json={"reported": {"a": 1}})
    assert status == 200, reply
    (changed,) = events(world, "twin_desired_updated")
    assert (changed["actor_id"], changed["target_kind"], changed["target_id"]) == (
        world.id("org_admin"),
        "device",
        device,
    )
    assert changed["target_name"] == "device_member" and changed["org_id"] == world.tenant.org_id
    assert changed["details"] == {"version": 1} and changed["request_id"]
    assert "4711" not in stored_text(world)
    assert [e["action"] for e in events(world)] == ["twin_desired_updated"]


async def test_orgs_groups_and_tunnel_closes_are_recorded(world: World) -> None:
    status, made = await world.call(
        "staff_unscoped", "POST", "/v2/orgs", json={"name": "Lab Co", "alias": "labco"}
    )
    assert status == 201, made
    (org,) = events(world, "org_created")
    assert (org["actor_kind"], org["target_kind"], org["target_name"]) == ("staff", "org", "Lab Co")
    assert org["actor_name"] == "admin" and org["details"] == {"name": "Lab Co", "alias": "labco"}
    status, group = await world.call("member", "POST", "/v2/groups", json={"name": "No"})
    assert status == 403 and events(world, "group_created") == []  # refused: nothing made
    status, group = await world.call(
        "org_admin", "POST", "/v2/groups", json={"name": "Night shift"}
    )
    assert status == 201, group
    (made,) = events(world, "group_created")
    assert (made["target_name"], made["details"]) == (
        "Night shift",
        {"name": "Night shift", "own_access": True},
    )
    device = world.id("device_member")
    opened = await world.open_tunnel("org_admin", "device_member")
    path = f"/v2/devices/{device}/tunnels/{opened['uuid']}"
    assert (await world.call("org_admin", "DELETE", path))[0] == 200
    (closed,) = events(world, "tunnel_closed")
    assert (closed["target_id"], closed["target_name"]) == (device, "device_member")
    assert closed["details"] == {"tunnel_id": opened["uuid"]}
    for _ in range(2):
        await world.open_tunnel("org_admin", "device_member")
    assert (await world.call("org_admin", "DELETE", f"/v2/devices/{device}/tunnels"))[0] == 200
    assert len(events(world, "tunnel_closed")) == 3  # one record per tunnel closed


async def test_names_are_shown_by_the_api(world: World) -> None:
    await sign_in(world, "member", PASSWORD, client_id="clinic")
    status, body = await world.call("org_admin", "GET", "/v2/audit?actor_name=member")
    assert status == 200, body
    (event,) = body["audit_events"]
    assert (event["actor_name"], event["target_name"]) == ("member", "member")


async def test_device_credential_resets_and_tunnels(world: World) -> None:
    device = world.id("device_loner")
    status, key = await world.call("org_admin", "POST", f"/v2/devices/{device}/reset-api-key")
    assert status == 200, key
    status, mqtt = await world.call(
        "org_admin", "POST", f"/v2/devices/{device}/reset-mqtt-credentials"
    )
    assert status == 200, mqtt
    status, tunnel = await world.call(
        "org_admin", "POST", f"/v2/devices/{device}/tunnels", json={"services": ["SSH"]}
    )
    assert status in (200, 201), tunnel
    seen = [(e["action"], e["target_kind"], e["target_id"]) for e in events(world)]
    assert seen == [
        ("device_api_key_reset", "device", device),
        ("device_certificate_reset", "device", device),
        ("tunnel_opened", "device", device),
    ]
    text = stored_text(world)
    tunnel_id = events(world, "tunnel_opened")[0]["details"]["tunnel_id"]
    secrets = [key["api_key"], *_strings(mqtt), *_strings(tunnel)]
    for value in secrets:  # the key, the certificate and its private key, the tunnel tokens
        if len(value) >= 20 and value not in (device, tunnel_id, world.tenant.org_id):
            assert value not in text


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# -- who may read it ----------------------------------------------------------------------
READERS = {"staff": 200, "staff_unscoped": 200, "org_admin": 200, "other_admin": 200}
DENIED = {
    "anonymous": 401,
    "plain": 403,
    "project_admin": 403,
    "org_user_perms": 403,
    "group_admin": 403,
    "member": 403,
    "device_boss": 403,  # a device, even one holding org admin access
    "device_plain": 403,
}


@pytest.mark.parametrize(
    ("who", "expected"),
    table(
        {**READERS, **DENIED},
        not_applicable=tuple(c for c in CALLERS if c not in {**READERS, **DENIED}),
    ),
)
async def test_who_may_read(world: World, who: str, expected: int) -> None:
    await world.site.services.audit.record(*_one_per_org(world))
    status, body = await world.call(who, "GET", "/v2/audit")
    assert status == expected, body
    if expected != 200:
        assert set(body) == {"message"}
        return
    orgs = {e.get("org_id") for e in body["audit_events"]}
    if who == "staff_unscoped":
        assert orgs == {world.tenant.org_id, world.other.org_id, None}
    else:
        org = world.other if who == "other_admin" else world.tenant
        assert orgs == {org.org_id}


def _one_per_org(world: World) -> list[Any]:
    from edge.kernel import audit

    return [
        audit.event("sign_in_failed", None, org_id=org, details={"factor": "password"})
        for org in (world.tenant.org_id, world.other.org_id, None)
    ]


async def test_filters_and_pages(world: World) -> None:
    for _ in range(3):
        await world.site.services.audit.record(*_one_per_org(world))
    await sign_in(world, "member", PASSWORD, client_id="clinic")
    status, body = await world.call("org_admin", "GET", "/v2/audit?action=sign_in")
    assert status == 200
    assert [e["actor_id"] for e in body["audit_events"]] == [world.id("member")]
    status, body = await world.call(
        "org_admin",
        "GET",
        f"/v2/audit?actor_id={world.id('member')}&target_id={world.id('member')}",
    )
    assert [e["action"] for e in body["audit_events"]] == ["sign_in"]
    today = clock.now_iso()[:10]
    status, body = await world.call("org_admin", "GET", f"/v2/audit?created_date={today}&limit=2")
    assert status == 200 and len(body["audit_events"]) == 2 and "last_evaluated_key" in body
    key = json.dumps(body["last_evaluated_key"])
    status, rest = await world.call(
        "org_admin",
        "GET",
        "/v2/audit",
        params={"created_date": today, "limit": "2", "last_evaluated_key": key},
    )
    assert status == 200 and len(rest["audit_events"]) == 2 and "last_evaluated_key" not in rest
    status, none = await world.call("org_admin", "GET", "/v2/audit?created_date_lt=2020-01-01")
    assert (status, none) == (200, {"audit_events": []})
    status, count = await world.call("org_admin", "GET", "/v2/audit?object_count=true")
    assert (status, count) == (200, {"object_count": 4})
    status, bad = await world.call("org_admin", "GET", "/v2/audit?password=x")
    assert status == 400 and set(bad) == {"message"}


# -- retention and the command line -------------------------------------------------------
async def test_retention_prunes_old_events(world: World) -> None:
    await world.site.services.audit.record(*_one_per_org(world))
    clock.advance(timedelta(days=world.site.services.config.audit_retention_days, hours=1))
    await sign_in(world, "member", PASSWORD, client_id="clinic")
    await sweep_once(world.site.services)
    assert [e["action"] for e in events(world)] == ["sign_in"]


async def test_the_command_line_prints_the_log(
    world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    await sign_in(world, "member", PASSWORD, client_id="clinic")
    await sign_in(world, "member", "wrong-password", client_id="clinic")
    folder = str(world.site.services.config.data_dir)

    def run(*argv: str) -> tuple[int, str]:
        code = cli.main(["audit", "list", "--data-dir", folder, *argv])
        return code, capsys.readouterr().out

    code, out = await asyncio.to_thread(run, "--org", "clinic")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[1] for line in lines] == ["sign_in", "sign_in_failed"]
    assert f"target=user:{world.id('member')}" in lines[1] and '"factor": "password"' in lines[1]
    code, out = await asyncio.to_thread(run, "--action", "sign_in", "--json")
    (event,) = [json.loads(line) for line in out.splitlines()]
    assert (event["action"], event["actor_id"]) == ("sign_in", world.id("member"))
    code, out = await asyncio.to_thread(run, "--until", "2020-01-01")
    assert (code, out) == (0, "")
    monkeypatch.setattr(sys, "stdin", io.StringIO(NEW_PASSWORD + "\n"))
    reset = ["admin", "reset-password", "member", "--org", "clinic", "--data-dir", folder]
    assert await asyncio.to_thread(cli.main, reset) == 0
    capsys.readouterr()
    code, out = await asyncio.to_thread(
        run, "--target", world.id("member"), "--since", "2020-01-01"
    )
    assert [line.split()[1:3] for line in out.splitlines()][-2:] == [
        ["password_set_by_operator", "actor=operator"],
        ["sign_in_blocks_cleared", "actor=operator"],
    ]
    assert "wrong-password" not in Path(folder, "edge.db").read_bytes().decode("latin-1")
    code, out = await asyncio.to_thread(run, "--action", "sign_in")
    assert f"actor=user:{world.id('member')}(member)" in out
    assert f"target=user:{world.id('member')}(member)" in out


def test_the_command_line_records_the_organizations_it_makes(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(world.site.services.config.data_dir)
    monkeypatch.setattr(sys, "stdin", io.StringIO(NEW_PASSWORD + "\n"))
    argv = ["admin", "create-org", "--data-dir", folder, "--name", "Depot", "--alias", "depot"]
    assert cli.main([*argv, "--admin-email", "boss@depot.test"]) == 0
    made = [e for e in events(world) if e["action"] in ("org_created", "user_created")]
    assert [(e["action"], e["actor_kind"], e["actor_name"]) for e in made] == [
        ("org_created", "operator", "operator"),
        ("user_created", "operator", "operator"),
    ]
    assert made[0]["target_name"] == "Depot" and made[1]["target_name"] == "boss@depot.test"
    assert made[1]["details"] == {"fields": ["email"], "org_admin": True}
    assert NEW_PASSWORD not in stored_text(world)


def test_the_docs_name_every_action() -> None:
    text = (Path(__file__).parents[2] / "docs" / "audit.md").read_text()
    assert [a for a in sorted(KNOWN) if f"`{a}`" not in text] == []


async def test_an_event_is_named_by_the_one_statement_that_records_it(world: World) -> None:
    """The writer records an event, its actor's and its target's names with one statement
    (storage/audit.py `add`): it ran a query per name, up to four, before the insert."""
    member, db = world.id("member"), world.site.services.db
    details = {"grantee_kind": "user", "grantee_id": member, "kind": "group"}
    details["on"] = world.org_group_id
    made = audit.event("access_granted", world.admin, target=("access", "x" * 29), details=details)
    statements: list[str] = []

    def record(conn: Tx) -> None:
        conn.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True
        try:
            audit.add(conn, made)
        finally:
            conn.exec_trace = None

    db.write_sync(record)
    assert len(statements) == 1
    written = [e for e in events(world, "access_granted") if e["id"] == made.id][0]
    assert (written["actor_name"], written["target_name"]) == (
        world.tenant.admin_email,
        "member on Ward",
    )
