"""`edge admin orgs|users|groups|devices ...` run in-process (`edge.cli.main`) on a copy of
the world's data folder (tests/world.py): each verb of each kind, its `--json` document
(the HTTP interface's body for the same call), its audit event (the HTTP one, with the
actor `operator`), and the refusals: an unknown org, user, group or device, a duplicate or
invalid e-mail, a password or key on the command line, a key file that exists."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from edge import cli
from edge.kernel.errors import Denied, Unauthenticated
from tests.factory import new_site
from tests.world import World

PASSWORD = "a-good-long-password-1"
NEW = "another-good-password-2"


@dataclass
class Done:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self.err
        return json.loads(self.out)


def admin(folder: Path, *argv: str, stdin: str = "") -> Done:
    """The real command on `folder`, with `stdin` as its standard input."""
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch("sys.stdin", io.StringIO(stdin)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = cli.main(["admin", *argv, "--data-dir", str(folder)])
    return Done(code, out.getvalue(), err.getvalue())


def usage_error(folder: Path, *argv: str) -> str:
    """What argparse says (exit code 2) about a command it refuses."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exited:
        cli.main(["admin", *argv, "--data-dir", str(folder)])
    assert exited.value.code == 2
    return err.getvalue()


def audit(folder: Path, target: str) -> list[dict[str, Any]]:
    """The target's audit events, oldest first (through `edge audit list`)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["audit", "list", "--target", target, "--json", "--data-dir", str(folder)])
    assert code == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def sign_in(folder: Path, login: str, password: str) -> dict[str, Any]:
    site = new_site(folder)
    try:
        body = {"grant_type": "password", "username": login, "password": password}
        grant = site.services.signin.password_grant(body | {"client_id": "clinic"}, "192.0.2.1")
        return asyncio.run(grant)
    finally:
        site.services.db.close()


def key_works(folder: Path, key: str) -> bool:
    site = new_site(folder)
    try:
        site.services.device_keys.verify(key)
        return True
    except Unauthenticated:
        return False
    finally:
        site.services.db.close()


@pytest.fixture
def folder(world_template: World, data_dir: Path) -> Path:
    """A copy of the world's folder (the `data_dir` of a test that asks for the world)."""
    return data_dir


# -- the same body as the HTTP interface ------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "path", "who"),
    [
        ("users", "/v2/users", "staff"),
        ("groups", "/v2/groups", "staff"),
        ("devices", "/v2/devices", "staff"),
        ("orgs", "/v2/orgs", "staff_unscoped"),
    ],
)
async def test_list_json_is_the_http_list_body(
    world: World, kind: str, path: str, who: str
) -> None:
    folder = world.site.services.config.data_dir
    where = () if kind == "orgs" else ("--org", "clinic")
    done = await asyncio.to_thread(admin, folder, kind, "list", *where, "--limit", "1000", "--json")
    status, body = await world.call(who, "GET", f"{path}?limit=1000")
    assert status == 200
    assert done.json() == body and len(body[kind]) >= 2


async def test_show_json_is_the_http_body(world: World) -> None:
    folder = world.site.services.config.data_dir
    for kind, name, given in (
        ("users", "user", "member"),
        ("groups", "group", world.org_group_id),
        ("devices", "device", "device_member"),
    ):
        found = world.id(given) if kind != "groups" else given
        done = await asyncio.to_thread(
            admin, folder, kind, "show", given, "--org", "clinic", "--json"
        )
        status, body = await world.call("staff", "GET", f"/v2/{kind}/{found}")
        assert (status, done.json()) == (200, body)
        assert body[name]["id"] == found
    done = await asyncio.to_thread(admin, folder, "orgs", "show", "CLINIC", "--json")
    status, body = await world.call("staff_unscoped", "GET", f"/v2/orgs/{world.tenant.org_id}")
    assert (status, done.json()) == (200, body)


# -- the same audit events as the HTTP interface -----------------------------------------
async def test_audit_events_are_the_http_ones_with_the_operator_as_actor(world: World) -> None:
    folder = world.site.services.config.data_dir
    body = {"email": "web@clinic.test", "username": "web", "password": PASSWORD}
    status, made = await world.call("staff", "POST", "/v2/users", json=body)
    assert status == 201
    done = await asyncio.to_thread(
        admin, folder, "users", "create", "cli@clinic.test", "--username", "cli", "--org", "clinic",
        "--json", stdin=PASSWORD + "\n",
    )  # fmt: skip
    by_cli = done.json()["user"]["id"]
    status, _ = await world.call(
        "staff", "PATCH", f"/v2/users/{made['user']['id']}", json={"is_active": False}
    )
    assert status == 200
    assert (
        await asyncio.to_thread(admin, folder, "users", "suspend", "cli", "--org", "clinic")
    ).code == 0
    status, _ = await world.call(
        "staff", "POST", f"/v2/devices/{world.id('device_loner')}/reset-api-key"
    )
    assert status == 200
    done = await asyncio.to_thread(
        admin, folder, "devices", "reset", "device_plain", "--org", "clinic"
    )
    assert done.code == 0, done.err

    pairs = (
        (made["user"]["id"], by_cli),
        (world.id("device_loner"), world.id("device_plain")),
    )
    for over_http, on_the_shell in pairs:
        http = await asyncio.to_thread(audit, folder, over_http)
        shell = await asyncio.to_thread(audit, folder, on_the_shell)
        assert [e["action"] for e in http] == [e["action"] for e in shell]
        for ours, theirs in zip(http, shell, strict=True):
            assert (ours["actor_kind"], theirs["actor_kind"]) == ("staff", "operator")
            assert "actor_id" not in theirs  # the operator has no account
            same = ("action", "org_id", "target_kind", "details")
            assert {k: ours.get(k) for k in same} == {k: theirs.get(k) for k in same}
    assert [e["action"] for e in shell] == ["device_api_key_reset"]
    assert [e["action"] for e in http] == ["device_api_key_reset"]


# -- users ---------------------------------------------------------------------------------
def test_users_create_show_suspend_resume_reset_unlock(folder: Path) -> None:
    where = ("--org", "clinic")
    made = admin(folder, "users", "create", "Jo@Clinic.test", "--username", "jdoe", *where,
                 "--first-name", "Jo", stdin=PASSWORD + "\n")  # fmt: skip
    assert made.code == 0, made.err
    assert "created user" in made.out and PASSWORD not in made.out + made.err
    user_id = made.out.split()[2]
    assert "access_token" in sign_in(folder, "jdoe", PASSWORD)  # a permanent password

    shown = admin(folder, "users", "show", "jo@clinic.test", *where, "--json").json()["user"]
    assert (shown["id"], shown["first_name"], shown["is_active"]) == (user_id, "Jo", True)
    table = admin(folder, "users", "show", user_id, *where)
    assert "username:" in table.out and "jdoe" in table.out

    suspended = admin(folder, "users", "suspend", "JDOE", *where, "--json").json()["user"]
    assert suspended["is_active"] is False
    with pytest.raises(Denied, match="suspended"):
        sign_in(folder, "jdoe", PASSWORD)
    listed = admin(folder, "users", "list", *where, "--suspended", "--json").json()["users"]
    assert [u["id"] for u in listed] == [user_id]
    resumed = admin(folder, "users", "resume", "jdoe", *where)
    assert resumed.code == 0 and "active again" in resumed.out
    assert "access_token" in sign_in(folder, "jdoe", PASSWORD)

    reset = admin(folder, "users", "reset", "jdoe", *where, "--json", stdin=NEW + "\n")
    assert reset.json() == {"user": {"id": user_id, "username": "jdoe"}}
    assert sign_in(folder, "jdoe", NEW)["challenge"] == "NEW_PASSWORD_REQUIRED"
    unlocked = admin(folder, "users", "unlock", user_id, *where)
    assert unlocked.code == 0 and "sign-in block(s) of user jdoe" in unlocked.out

    actions = [(e["action"], e["actor_kind"]) for e in audit(folder, user_id)]
    signing_in = ("sign_in", "user")  # the user's own sign-ins, in between
    assert [a for a in actions if a != signing_in] == [
        ("user_created", "operator"),
        ("user_updated", "operator"),
        ("user_updated", "operator"),
        ("password_set_by_operator", "operator"),
        ("sign_in_blocks_cleared", "operator"),
        ("sign_in_blocks_cleared", "operator"),
    ]


def test_users_create_temporary_and_invite(folder: Path) -> None:
    where = ("--org", "clinic")
    temporary = admin(folder, "users", "create", "t@clinic.test", "--username", "temp", *where,
                      "--temporary", stdin=PASSWORD + "\n")  # fmt: skip
    assert temporary.code == 0, temporary.err
    assert sign_in(folder, "temp", PASSWORD)["challenge"] == "NEW_PASSWORD_REQUIRED"
    invited = admin(folder, "users", "create", "i@clinic.test", *where, "--invite", "--json")
    user = admin(folder, "users", "show", invited.json()["user"]["id"], *where, "--json").json()
    assert user["user"]["has_temporary_password"] is True


def test_users_list_pages_with_limit_and_after(folder: Path) -> None:
    where = ("--org", "clinic")
    every = admin(folder, "users", "list", *where, "--limit", "1000", "--json").json()["users"]
    first = admin(folder, "users", "list", *where, "--limit", "3", "--json").json()
    assert [u["id"] for u in first["users"]] == [u["id"] for u in every[:3]]
    key = json.dumps(first["last_evaluated_key"])
    rest = admin(folder, "users", "list", *where, "--after", key, "--limit", "1000", "--json")
    assert [u["id"] for u in rest.json()["users"]] == [u["id"] for u in every[3:]]
    assert "last_evaluated_key" not in rest.json()
    table = admin(folder, "users", "list", *where, "--limit", "3")
    assert table.out.splitlines()[0].split() == [
        "ID",
        "USERNAME",
        "E-MAIL",
        "ACTIVE",
        "PROJECT",
        "LAST",
        "SEEN",
    ]
    assert len(table.out.splitlines()) == 5 and "--after" in table.out.splitlines()[-1]
    found = admin(folder, "users", "list", *where, "--search", "loner", "--json").json()
    assert [u["username"] for u in found["users"]] == ["loner"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("users", "list", "--org", "nowhere"), "org: does not name an organization"),
        (("groups", "list", "--org", "nowhere"), "org: does not name an organization"),
        (("devices", "list", "--org", "nowhere"), "org: does not name an organization"),
        (
            ("users", "show", "nobody", "--org", "clinic"),
            "no user of clinic has the ID or login 'nobody'",
        ),
        (("users", "suspend", "nobody", "--org", "clinic"), "no user of clinic"),
        (("users", "resume", "nobody", "--org", "other"), "no user of other"),
        (("users", "reset", "member", "--org", "other"), "no user of other"),  # another org's
        (("users", "unlock", "nobody"), "no staff account has the login 'nobody'"),
        (
            ("groups", "show", "nothing", "--org", "clinic"),
            "no group of clinic has the ID or name 'nothing'",
        ),
        (
            ("devices", "reset", "nothing", "--org", "clinic"),
            "no device of clinic has the ID or name",
        ),
        (("users", "list", "--org", "clinic", "--limit", "0"), "limit: must be"),
        (("orgs", "show", "nowhere"), "org: does not name an organization"),
    ],
)
def test_refusals_are_one_line_and_exit_1(
    folder: Path, argv: tuple[str, ...], message: str
) -> None:
    done = admin(folder, *argv, stdin=NEW + "\n")
    assert (done.code, done.out) == (1, "")
    assert done.err.startswith(f"edge: {message}") and done.err.count("\n") == 1


@pytest.mark.parametrize(
    ("email", "message"),
    [
        ("member@clinic.test", "edge: email: is already used by another user of this organization"),
        ("not-an-address", "edge: email: must be an e-mail address"),
    ],
)
def test_a_duplicate_or_invalid_email_is_refused(folder: Path, email: str, message: str) -> None:
    before = admin(folder, "users", "list", "--org", "clinic", "--limit", "1000", "--json").json()
    done = admin(folder, "users", "create", email, "--org", "clinic", stdin=PASSWORD + "\n")
    assert (done.code, done.err.strip()) == (1, message)
    after = admin(folder, "users", "list", "--org", "clinic", "--limit", "1000", "--json").json()
    assert after == before


@pytest.mark.parametrize(
    "argv",
    [
        ("users", "create", "x@clinic.test", "--org", "clinic", "--password", PASSWORD),
        ("users", "create", "x@clinic.test", "--org", "clinic", "--temp-password", PASSWORD),
        ("users", "reset", "member", "--org", "clinic", "--password", PASSWORD),
        ("orgs", "create", "Plant", "--admin-email", "a@b.test", "--admin-password", PASSWORD),
        ("devices", "reset", "device_plain", "--org", "clinic", "--api-key", "edk_x"),
    ],
)
def test_no_password_or_key_on_the_command_line(folder: Path, argv: tuple[str, ...]) -> None:
    assert "unrecognized arguments" in usage_error(folder, *argv)


# -- groups --------------------------------------------------------------------------------
def test_groups_create_show_suspend_resume(folder: Path) -> None:
    where = ("--org", "clinic")
    made = admin(folder, "groups", "create", "Night shift", *where, "--description", "22-6",
                 "--json").json()  # fmt: skip
    group_id = made["group"]["id"]
    shown = admin(folder, "groups", "show", "night SHIFT", *where, "--json").json()["group"]
    assert (shown["id"], shown["description"], shown["is_active"]) == (group_id, "22-6", True)
    assert (
        admin(folder, "groups", "suspend", group_id, *where, "--json").json()["group"]["is_active"]
        is False
    )
    listed = admin(folder, "groups", "list", *where, "--suspended", "--json").json()["groups"]
    assert [g["id"] for g in listed] == [group_id]
    resumed = admin(folder, "groups", "resume", "Night shift", *where)
    assert resumed.code == 0 and f"group {group_id} (Night shift) is active again" in resumed.out

    twin = admin(folder, "groups", "create", "night shift", *where)  # names need not be unique
    assert twin.code == 0
    done = admin(folder, "groups", "show", "Night shift", *where)
    assert (
        done.code == 1
        and "several groups of clinic are named 'Night shift': give the ID" in done.err
    )


def test_groups_have_no_reset(folder: Path) -> None:
    said = usage_error(folder, "groups", "reset", "Ward", "--org", "clinic")
    assert "invalid choice: 'reset'" in said


def test_groups_list_by_project(world_template: World, folder: Path) -> None:
    project = world_template.project_id
    listed = admin(folder, "groups", "list", "--org", "clinic", "--project", project, "--json")
    assert project and {g["project_id"] for g in listed.json()["groups"]} == {project}


# -- devices -------------------------------------------------------------------------------
def test_devices_create_reset_suspend_resume(folder: Path, tmp_path: Path) -> None:
    where = ("--org", "clinic")
    made = admin(folder, "devices", "create", "pump-7", *where)
    assert made.code == 0, made.err
    key = made.out.split("API key: ")[1].split()[0]
    assert key_works(folder, key) and "edge device bundle" in made.out
    assert "PRIVATE KEY" not in made.out  # the key pair is not shown: the bundle writes one

    out = tmp_path / "pump.key"
    reset = admin(folder, "devices", "reset", "PUMP-7", *where, "--out", str(out), "--json")
    assert reset.json() == {"id": made.out.split()[2], "api_key_file": str(out)}
    new = out.read_text().strip()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and new not in reset.out
    assert key_works(folder, new) and not key_works(folder, key)

    again = admin(folder, "devices", "reset", "pump-7", *where, "--out", str(out))
    assert again.code == 1 and "exists" in again.err
    assert key_works(folder, new)  # a refused file resets nothing

    assert admin(folder, "devices", "suspend", "pump-7", *where).code == 0
    assert not key_works(folder, new)
    assert admin(folder, "devices", "resume", "pump-7", *where, "--json").json()["device"][
        "is_active"
    ]
    assert key_works(folder, new)


def test_devices_create_json_and_out(folder: Path, tmp_path: Path) -> None:
    made = admin(folder, "devices", "create", "pump-8", "--org", "clinic", "--json").json()
    device = made["device"]
    assert device["api_key"].startswith("edk_") and key_works(folder, device["api_key"])
    assert {"root_scope", "broker", "root_ca"} <= set(device)
    assert not {"private_key", "certificate", "public_key"} & set(device)
    out = tmp_path / "k"
    done = admin(folder, "devices", "create", "pump-9", "--org", "clinic", "--out", str(out))
    assert done.code == 0 and "edk_" not in done.out
    assert key_works(folder, out.read_text().strip())
    clash = admin(folder, "devices", "create", "PUMP-9", "--org", "clinic")
    assert clash.code == 1 and clash.err.startswith("edge: name")


def test_devices_list_by_group(world_template: World, folder: Path) -> None:
    group = world_template.org_group_id
    listed = admin(folder, "devices", "list", "--org", "clinic", "--group", group, "--json")
    names = {d["name"] for d in listed.json()["devices"]}
    assert names == {"device_member", "device_boss"}


# -- orgs ----------------------------------------------------------------------------------
def test_orgs_create_list_show(folder: Path) -> None:
    made = admin(folder, "orgs", "create", "Plant One", "--alias", "plant1", "--json").json()
    org_id = made["org"]["id"]
    found = admin(folder, "orgs", "list", "--search", "plant", "--json").json()["orgs"]
    assert [o["id"] for o in found] == [org_id]
    shown = admin(folder, "orgs", "show", "plant1", "--json").json()["org"]
    assert (shown["id"], shown["name"], shown["alias"]) == (org_id, "Plant One", "plant1")
    listed = admin(folder, "orgs", "list")
    assert "plant1" in listed.out and "clinic" in listed.out
    taken = admin(folder, "orgs", "create", "Plant Two", "--alias", "PLANT1")
    assert (taken.code, taken.err.strip()) == (1, "edge: alias: 'plant1' is already taken")

    with_admin = admin(folder, "orgs", "create", "Plant Two", "--alias", "plant2",
                       "--admin-email", "boss@plant.test", stdin=PASSWORD + "\n")  # fmt: skip
    assert with_admin.code == 0 and "with admin boss@plant.test" in with_admin.out
    boss = admin(folder, "users", "show", "boss@plant.test", "--org", "plant2", "--json").json()
    assert boss["user"]["is_org_admin"] is True


def test_the_old_names_still_work(folder: Path) -> None:
    old = admin(folder, "reset-password", "member", "--org", "clinic", stdin=NEW + "\n")
    assert old.code == 0 and "new password set for user member" in old.out
    assert admin(folder, "unlock", "member", "--org", "clinic").code == 0
    made = admin(folder, "create-org", "--name", "Old Way", "--admin-email", "o@old.test",
                 stdin=PASSWORD + "\n")  # fmt: skip
    assert made.code == 0 and "The admin signs in with POST" in made.out


# -- help ----------------------------------------------------------------------------------
def _verbs() -> list[tuple[str, ...]]:
    """Every `edge admin ...` command, as the words that name it."""
    found = []
    admin_parser = _choices(cli._parser())["admin"]
    for name, parser in _choices(admin_parser).items():
        below = _choices(parser)
        found += [(name, verb) for verb in below] if below else [(name,)]
    return found


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_verb_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    verbs = _verbs()
    assert (
        ("users", "suspend") in verbs and ("orgs", "create") in verbs and ("create-org",) in verbs
    )
    for words in verbs:
        with pytest.raises(SystemExit):
            cli.main(["admin", *words, "--help"])
        text = capsys.readouterr().out
        assert f"example:\n  edge admin {' '.join(words)} " in text, words


def test_building_the_parser_loads_no_service() -> None:
    """`edge version` and `edge tunnel ...` build the same parser: it must stay light."""
    probe = "import sys, edge.cli; edge.cli._parser(); print('edge.services' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
