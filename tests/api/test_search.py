"""`?search=` on every list answers honestly (docs/lists.md "Search"): where a list has a
full-text search, the words given are found (each a prefix of a word, case-insensitive,
every word needed) within what the caller may see, page by page; where it has none, the
parameter is a 400 naming it, never an empty list as if nothing matched.

Before migration 0036, the files, jobs, trash and claims lists answered every search with
an empty list (their tables had no index, and the engine added `WHERE 0`), and so did the
audit, billing and executions lists, which now refuse it; a role's access lists passed
`search_fields` to the target's index unchecked (a 500 for a column it lacks). The sweep
at the end walks every GET list of the router: a list the document offers `search` on
takes it, and every other list refuses it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from api.openapi import query_names
from edge.app import ROUTES, Site
from tests.api.test_tenant_isolation import concrete, populate
from tests.conftest import Api
from tests.files import PART
from tests.world import World

REFUSED = "search: is not offered: this list has no full-text search"


def found(body: dict[str, Any], key: str, field: str = "id") -> list[Any]:
    return [row[field] for row in body[key]]


async def listed(world: World, who: str, path: str, **params: str) -> dict[str, Any]:
    status, body = await world.call(who, "GET", path, params=params)
    assert status == 200, (path, params, body)
    return dict(body)


async def walk(world: World, who: str, path: str, key: str, **params: str) -> list[Any]:
    """Every row of a list, a page of one at a time, following the continuation keys."""
    rows: list[Any] = []
    params = {**params, "limit": "1"}
    while True:
        body = await listed(world, who, path, **params)
        rows.extend(body[key])
        if "last_evaluated_key" not in body:
            return rows
        params["last_evaluated_key"] = json.dumps(body["last_evaluated_key"])


# -- files: the path, the file name and the text index fields ------------------------------
FILES = {
    "reports/blood-panel.txt": {"unicode_1": "Oslo ward"},
    "reports/xray.png": {"unicode_2": "Bergen"},
    "shared/blood-notes.txt": {},
    "shared/secret/blood-secret.txt": {},
}


async def scans_with_files(world: World) -> None:
    for path, index in FILES.items():
        status, reply = await world.upload("org_admin", path, b"x", **index)
        assert status == 200, reply


@pytest.mark.world("content", files_min_part_bytes=PART)
async def test_files_are_found_by_path_name_and_index_fields(world: World) -> None:
    await scans_with_files(world)
    cases = {
        "blood": [
            "/reports/blood-panel.txt",
            "/shared/blood-notes.txt",
            "/shared/secret/blood-secret.txt",
        ],
        "BLOOD PAN": ["/reports/blood-panel.txt"],  # every word, each a prefix, any case
        "osl": ["/reports/blood-panel.txt"],  # unicode_1
        "bergen": ["/reports/xray.png"],  # unicode_2
        "secret": ["/shared/secret/blood-secret.txt"],  # a folder of the path
        "blood bergen": [],
        "nowhere": [],
    }
    for text, wanted in cases.items():
        body = await world.files("org_admin", "GET", "/", params={"cascade": "", "search": text})
        assert found(body[1], "files", "path") == wanted, text
    body = await listed(
        world,
        "org_admin",
        f"/v2/groups/{world.files_group_id}/files/shared",
        cascade="",
        search="blood",
        search_fields="filename",
        paths_only="",
    )
    assert body["paths"] == ["/shared/blood-notes.txt", "/shared/secret/blood-secret.txt"]
    body = await listed(
        world,
        "org_admin",
        f"/v2/groups/{world.files_group_id}/files/",
        cascade="",
        search="blood",
        object_count="",
    )
    assert body == {"object_count": 3}


@pytest.mark.world("content", files_min_part_bytes=PART)
async def test_a_file_search_keeps_to_what_the_caller_may_read(world: World) -> None:
    await scans_with_files(world)
    params = {"cascade": "", "search": "blood", "paths_only": ""}
    status, body = await world.files("file_scoped", "GET", "shared", params=params)
    assert (status, body) == (200, {"paths": ["/shared/blood-notes.txt"]})  # not /shared/secret
    # Who reads nothing of Scans finds nothing (a member of it: an empty list, as without a
    # search); who may not see Scans is refused as without a search.
    for who, answer in (("scans_member", 200), ("plain", 404), ("member", 404)):
        status, body = await world.files(who, "GET", "/", params=params)
        assert status == answer and body in ({"paths": []}, {"message": body.get("message")}), who
        assert "blood" not in json.dumps(body), (who, body)


@pytest.mark.world("content", files_min_part_bytes=PART)
async def test_a_file_search_pages_by_continuation_key(world: World) -> None:
    await scans_with_files(world)
    where = f"/v2/groups/{world.files_group_id}/files/"
    paged = await walk(
        world, "org_admin", where, "paths", cascade="", search="blood", paths_only=""
    )
    whole = await listed(world, "org_admin", where, cascade="", search="blood", paths_only="")
    assert paged == whole["paths"] and len(paged) == 3


@pytest.mark.world("content", files_min_part_bytes=PART)
async def test_a_file_search_field_files_do_not_have_is_a_400(world: World) -> None:
    params = {"cascade": "", "search": "blood", "search_fields": "size"}
    status, body = await world.files("org_admin", "GET", "/", params=params)
    assert status == 400 and body["message"].startswith("search_fields: 'size' is not searchable")


# -- the access lists: the target's name, description and tags ------------------------------
async def test_a_roles_access_lists_search_the_named_fields(world: World) -> None:
    """The role's access lists searched through a scope of their own, past the list
    engine's check of `search_fields`: `alias` (a project's, not a group's) was a 500."""
    role = world.org_role_id
    await world.grant("project", world.project_id, role, "role", can_read=True)
    groups = f"/v2/roles/{role}/access/groups"
    body = await listed(world, "org_admin", groups, search="war", search_fields="name")
    assert found(body, "group_access", "group_id") == [world.org_group_id]
    body = await listed(world, "org_admin", groups, search="war", search_fields="description")
    assert body == {"group_access": []}
    projects = f"/v2/roles/{role}/access/projects"
    body = await listed(world, "org_admin", projects, search="apollo", search_fields="alias")
    assert found(body, "project_access", "project_id") == [world.project_id]
    status, body = await world.call(
        "org_admin", "GET", groups, params={"search": "war", "search_fields": "alias"}
    )
    assert status == 400 and body["message"].startswith("search_fields: 'alias' is not searchable")


async def test_an_access_search_keeps_to_the_callers_own_access_and_pages(world: World) -> None:
    names = ("Ward Annex", "Ward Basement", "Ward Canteen")
    for name in names:
        group = await world.new_group(name=name, description="night shift")
        await world.grant("group", group, world.id("member"), can_read=True)
    await world.new_group(name="Ward Dock", description="night shift")  # the member holds none
    path = "/v2/account/access/groups"
    wanted = ["Ward", *names]  # the member's Ward, then the three
    body = await listed(world, "member", path, search="ward", order_by="group_name")
    assert found(body, "group_access", "group_name") == wanted
    paged = await walk(world, "member", path, "group_access", search="ward", order_by="group_name")
    assert [row["group_name"] for row in paged] == wanted
    body = await listed(world, "member", path, search="night ward bas")
    assert found(body, "group_access", "group_name") == ["Ward Basement"]
    body = await listed(world, "member", path, search="dock")
    assert body == {"group_access": []}
    body = await listed(world, "plain", path, search="ward")  # holds no access at all
    assert body == {"group_access": []}
    body = await listed(world, "member", path, search="ward", ids_only="true", object_count="")
    assert body == {"object_count": 4}


# -- the extension lists ---------------------------------------------------------------------
@pytest.mark.world(jobs_tick_seconds=3600)
async def test_jobs_are_found_by_their_description(world: World) -> None:
    made = {}
    for description in ("Firmware 2.1 for pumps", "Reboot pumps", "Firmware 3.0 for monitors"):
        body = {"description": description, "document": {"v": 1}}
        body["targets"] = {"device_ids": [world.id("device_member")]}
        status, reply = await world.call("org_admin", "POST", "/v2/jobs", json=body)
        assert status == 201, reply
        made[description] = reply["job"]["id"]
    body = await listed(world, "org_admin", "/v2/jobs", search="firmware pump")
    assert found(body, "jobs") == [made["Firmware 2.1 for pumps"]]
    body = await listed(world, "org_admin", "/v2/jobs", search="PUMPS", order_by="description")
    assert found(body, "jobs") == [made["Firmware 2.1 for pumps"], made["Reboot pumps"]]
    assert await listed(world, "org_admin", "/v2/jobs", search="toaster") == {"jobs": []}
    body = await listed(world, "plain", "/v2/jobs", search="firmware")  # may list no job
    assert body == {"jobs": []}


async def test_the_trash_is_found_by_name_and_kind(world: World) -> None:
    team = await world.new_group(name="Night Team")
    for path in (f"/v2/groups/{team}", f"/v2/devices/{world.id('device_loner')}"):
        status, body = await world.call("org_admin", "DELETE", path)
        assert status == 200, body
    body = await listed(world, "org_admin", "/v2/trash", search="night")
    assert found(body, "trash") == [team]
    body = await listed(world, "org_admin", "/v2/trash", search="device", search_fields="kind")
    assert found(body, "trash") == [world.id("device_loner")]
    assert await listed(world, "org_admin", "/v2/trash", search="day") == {"trash": []}
    status, body = await world.call("plain", "GET", "/v2/trash", params={"search": "night"})
    assert status == 403 and set(body) == {"message"}


async def test_claims_are_found_by_name(world: World) -> None:
    for name in ("Line 4 pumps", "Line 5 monitors"):
        status, reply = await world.call(
            "org_admin", "POST", "/v2/provisioning/claims", json={"name": name}
        )
        assert status == 201, reply
    path = "/v2/provisioning/claims"
    body = await listed(world, "org_admin", path, search="monitor")
    assert found(body, "claims", "name") == ["Line 5 monitors"]
    assert await listed(world, "org_admin", path, search="line 6") == {"claims": []}
    status, body = await world.call("plain", "GET", path, params={"search": "line"})
    assert status == 403 and set(body) == {"message"}


@pytest.mark.parametrize(
    ("path", "who"),
    [
        ("/v2/audit", "org_admin"),
        ("/v2/orgs/{org}/billing-points", "staff"),
        ("/v2/jobs/{job}/executions", "org_admin"),
        ("/v2/devices/{device}/executions", "org_admin"),
    ],
)
@pytest.mark.world(jobs_tick_seconds=3600)
async def test_lists_without_text_refuse_search(world: World, path: str, who: str) -> None:
    body = {"document": {"v": 1}, "targets": {"device_ids": [world.id("device_member")]}}
    status, reply = await world.call("org_admin", "POST", "/v2/jobs", json=body)
    assert status == 201, reply
    where = path.format(
        org=world.tenant.org_id, job=reply["job"]["id"], device=world.id("device_member")
    )
    status, listed_ = await world.call(who, "GET", where)
    assert status == 200, listed_
    for params in ({"search": "a"}, {"search_fields": "x"}):
        status, body = await world.call(who, "GET", where, params=params)
        assert status == 400 and set(body) == {"message"}, (params, body)
        assert body["message"].startswith(next(iter(params))), body


# -- the sweep: every list of the router -----------------------------------------------------
GETS = [
    r
    for r in ROUTES
    if r.method == "GET" and r.response_type != "text/event-stream" and "limit" in query_names(r)
]


async def test_every_list_takes_search_exactly_where_the_document_offers_it(
    site: Site, api: Api
) -> None:
    """A list offering `search` must answer it (a 2xx, never a 500 from an index it does
    not have); a list that does not offer it refuses it with a 400 naming it."""
    org = await populate(site, api, "Searchers", "searchers")
    assert len(GETS) > 20
    for route in GETS:
        who = "staff" if route.auth == "staff" else "org_admin"
        path = concrete(route.path, org.ids)
        params = {"search": "searchers", **({"cascade": "true"} if "{path" in route.path else {})}
        status, body = await api.call("GET", path, org.tokens[who], params=params)
        if "search" in query_names(route):
            assert status == 200, (route.path, status, body)
        else:
            assert (status, body) == (400, {"message": REFUSED}), route.path
