"""Deleted records: the trash, restoring, erasing, and what a delete takes with it
(docs/lifecycle.md). Denials sit next to grants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from edge.app import Site
from edge.kernel import clock
from storage import trash as trash_store
from tests.conftest import Api
from tests.tenants import PASSWORD, Tenant
from tests.world import World


async def ok(api: Api, method: str, path: str, token: str, **kwargs: Any) -> Any:
    status, body = await api.call(method, path, token, **kwargs)
    assert status in (200, 201), (method, path, status, body)
    return body


async def new_user(api: Api, token: str, name: str, **extra: Any) -> str:
    body = {"username": name, "email": f"{name}@clinic.test", "password": PASSWORD, **extra}
    return str((await ok(api, "POST", "/v2/users", token, json=body))["user"]["id"])


async def test_a_deleted_user_is_gone_ends_sessions_and_frees_the_name(
    api: Api, tenant: Tenant
) -> None:
    admin = await tenant.token()
    user_id = await new_user(api, admin, "nurse")
    nurse = await tenant.token("nurse@clinic.test")
    assert (await api.call("GET", "/v2/account/access/current-session", nurse))[0] == 200
    await ok(api, "DELETE", f"/v2/users/{user_id}", admin)
    assert (await api.call("GET", f"/v2/users/{user_id}", admin))[0] == 404
    assert (await api.call("GET", "/v2/account/access/current-session", nurse))[0] == 401
    listed = await ok(api, "GET", "/v2/users", admin)
    assert user_id not in [u["id"] for u in listed["users"]]
    entry = (await ok(api, "GET", f"/v2/trash/{user_id}", admin))["trash"]
    assert entry["kind"] == "user" and entry["name"] == "nurse"
    assert await new_user(api, admin, "nurse") != user_id  # the name is free at once


async def test_restore_brings_a_user_back_with_password_and_access(
    api: Api, tenant: Tenant
) -> None:
    admin = await tenant.token()
    group = (await ok(api, "POST", "/v2/groups", admin, json={"name": "Ward"}))["group"]["id"]
    user_id = await new_user(api, admin, "nurse")
    await ok(api, "POST", f"/v2/groups/{group}/access/{user_id}", admin, json={"can_read": True})
    await ok(api, "DELETE", f"/v2/users/{user_id}", admin)
    await ok(api, "POST", f"/v2/trash/{user_id}/restore", admin)
    assert (await api.call("GET", f"/v2/trash/{user_id}", admin))[0] == 404
    nurse = await tenant.token("nurse@clinic.test")  # the old password works again
    assert (await api.call("GET", f"/v2/groups/{group}", nurse))[0] == 200


async def test_restore_is_refused_while_the_name_is_taken(api: Api, tenant: Tenant) -> None:
    admin = await tenant.token()
    first = await new_user(api, admin, "nurse")
    await ok(api, "DELETE", f"/v2/users/{first}", admin)
    second = await new_user(api, admin, "nurse")
    status, body = await api.call("POST", f"/v2/trash/{first}/restore", admin)
    assert status == 409 and "users" in body["message"]
    await ok(api, "DELETE", f"/v2/users/{second}?permanent=true", admin)
    assert (await api.call("GET", f"/v2/trash/{second}", admin))[0] == 404  # erased, no entry
    await ok(api, "POST", f"/v2/trash/{first}/restore", admin)
    assert (await ok(api, "GET", f"/v2/users/{first}", admin))["user"]["username"] == "nurse"


async def test_a_deleted_role_grants_nothing_until_restored(api: Api, tenant: Tenant) -> None:
    admin = await tenant.token()
    group = (await ok(api, "POST", "/v2/groups", admin, json={"name": "Ward"}))["group"]["id"]
    role = (await ok(api, "POST", "/v2/roles", admin, json={"name": "Reader"}))["role"]["id"]
    await ok(api, "POST", f"/v2/groups/{group}/access/{role}", admin, json={"can_read": True})
    user_id = await new_user(api, admin, "nurse")
    await ok(api, "POST", f"/v2/roles/{role}/access/{user_id}", admin, json={})
    nurse = await tenant.token("nurse@clinic.test")
    assert (await api.call("GET", f"/v2/groups/{group}", nurse))[0] == 200
    await ok(api, "DELETE", f"/v2/roles/{role}", admin)
    assert (await api.call("GET", f"/v2/groups/{group}", nurse))[0] == 404
    await ok(api, "POST", f"/v2/trash/{role}/restore", admin)
    assert (await api.call("GET", f"/v2/groups/{group}", nurse))[0] == 200


async def test_a_deleted_project_takes_its_members_and_alias_and_returns_them(
    api: Api, tenant: Tenant
) -> None:
    admin = await tenant.token()
    body = {"name": "Lab", "alias": "the-lab"}
    project = (await ok(api, "POST", "/v2/projects", admin, json=body))["project"]["id"]
    body = {"name": "Bench", "project_id": project}
    group = (await ok(api, "POST", "/v2/groups", admin, json=body))["group"]["id"]
    user_id = await new_user(api, admin, "tech", project_id=project)
    await ok(api, "DELETE", f"/v2/projects/{project}", admin)
    for path in (f"/v2/projects/{project}", f"/v2/groups/{group}", f"/v2/users/{user_id}"):
        assert (await api.call("GET", path, admin))[0] == 404, path
    taken = await ok(api, "POST", "/v2/projects", admin, json={"name": "Other", "alias": "the-lab"})
    status, _ = await api.call("POST", f"/v2/trash/{project}/restore", admin)
    assert status == 409  # the alias went to the new project
    await ok(api, "DELETE", f"/v2/projects/{taken['project']['id']}?permanent=true", admin)
    await ok(api, "POST", f"/v2/trash/{project}/restore", admin)
    for path in (f"/v2/projects/{project}", f"/v2/groups/{group}", f"/v2/users/{user_id}"):
        assert (await api.call("GET", path, admin))[0] == 200, path


async def test_erasing_an_entry_and_the_sweep_after_retention(
    api: Api, tenant: Tenant, site: Site
) -> None:
    admin = await tenant.token()
    groups = []
    for name in ("A", "B"):
        groups.append(
            (await ok(api, "POST", "/v2/groups", admin, json={"name": name}))["group"]["id"]
        )
        await ok(api, "DELETE", f"/v2/groups/{groups[-1]}", admin)
    await ok(api, "DELETE", f"/v2/trash/{groups[0]}", admin)
    assert (await api.call("POST", f"/v2/trash/{groups[0]}/restore", admin))[0] == 404
    entry = (await ok(api, "GET", f"/v2/trash/{groups[1]}", admin))["trash"]
    later = clock.parse(entry["purge_after"])
    erased = site.services.db.write_sync(lambda c: trash_store.purge_expired(c, clock.iso(later)))
    assert erased == 1
    assert (await ok(api, "GET", "/v2/trash", admin))["trash"] == []


async def test_who_sees_the_trash(api: Api, tenant: Tenant) -> None:
    """Who may see and touch the trash is tested in tests/edge/tenancy/test_trash.py; here,
    that a member who is no admin gets a 403 on each route, and a project admin gets their
    projects' entries and a 404 for another's."""
    admin = await tenant.token()
    project = (await ok(api, "POST", "/v2/projects", admin, json={"name": "P"}))["project"]["id"]
    inside = (
        await ok(api, "POST", "/v2/groups", admin, json={"name": "In", "project_id": project})
    )["group"]["id"]
    outside = (await ok(api, "POST", "/v2/groups", admin, json={"name": "Out"}))["group"]["id"]
    for group in (inside, outside):
        await ok(api, "DELETE", f"/v2/groups/{group}", admin)
    await new_user(api, admin, "someone")
    plain = await tenant.token("someone@clinic.test")
    for method, path in (
        ("GET", "/v2/trash"),
        ("POST", f"/v2/trash/{outside}/restore"),
        ("DELETE", f"/v2/trash/{outside}"),
    ):
        status, body = await api.call(method, path, plain)
        assert status == 403 and set(body) == {"message"}, (method, path)
    lead = await new_user(api, admin, "lead")
    await ok(api, "POST", f"/v2/projects/{project}/access/{lead}", admin, json={"is_admin": True})
    token = await tenant.token("lead@clinic.test")
    listed = (await ok(api, "GET", "/v2/trash", token))["trash"]
    assert [e["id"] for e in listed] == [inside]
    status, body = await api.call("POST", f"/v2/trash/{outside}/restore", token)
    assert status == 404 and set(body) == {"message"}


# kind -> (its path, the record made delete protected, a caller who may delete it but is no
# admin of it): one kind of each room
GUARDED: dict[str, tuple[str, Callable[[World], str], str]] = {
    "user": ("users", lambda w: w.id("plain"), "org_user_perms"),
    "project": ("projects", lambda w: w.project_id, "org_project_perms"),
}


@pytest.mark.parametrize("kind", sorted(GUARDED))
async def test_one_guard_for_every_delete(world: World, kind: str) -> None:
    """The trash's delete guards every kind alike: a protected record needs force, and
    force is for admins, whoever else may delete it. The guard's cases are tested in
    tests/edge/tenancy/test_trash.py and each kind's use of it in its room (accounts,
    groups, roles, projects); here, an account and a tenancy kind show the statuses and
    messages."""
    resource, record, who = GUARDED[kind]
    path = f"/v2/{resource}/{record(world)}"
    status, _ = await world.call("org_admin", "PATCH", path, json={"is_delete_protected": True})
    assert status == 200
    protected = f"{kind.capitalize()} is delete protected: set is_delete_protected to false"
    status, body = await world.call(who, "DELETE", path)
    assert status == 409 and body["message"].startswith(protected)
    status, body = await world.call(who, "DELETE", path + "?force=true")
    assert (status, body) == (403, {"message": "force: only admins may force a delete"})
    assert (await world.call("org_admin", "GET", path))[0] == 200
