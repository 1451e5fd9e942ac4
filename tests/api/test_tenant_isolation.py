"""Tenant isolation, swept over the router: with two organizations populated through the
API, no GET answered to any actor of one organization (a device with its API key among
them) contains an ID of the other, and the other's IDs in a path are always a 403 or 404.

New GET routes are covered as soon as they are added (their path parameters must be
named in PARAMS below, or the sweep fails and says which).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from edge.app import ROUTES, Site
from tests.conftest import Api
from tests.files import relative
from tests.tenants import PASSWORD, Tenant, new_tenant

# An event stream answers until the client leaves: who hears what across orgs is
# tests/api/test_event_permissions.py's (other_admin hears nothing of Clinic).
GETS = [
    r
    for r in ROUTES
    if r.method == "GET" and r.auth != "public" and r.response_type != "text/event-stream"
]
PARAMS = {  # path parameter -> the kind of ID it takes
    "org_id": "org",
    "project_id": "project",
    "group_id": "group",
    "role_id": "role",
    "user_id": "user",
    "grantee_id": "user",
    "account_id": "user",
    "template_id": "template",
    "entry_id": "trashed",
    "device_id": "device",
    "tunnel_uuid": "tunnel",
    "request_id": "command",
    "claim_id": "claim",
    "job_id": "job",
    "path": "path",  # data or a file, by the route ({path:.*} spans slashes)
}


@dataclass
class Org:
    tenant: Tenant
    ids: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    all_ids: set[str] = field(default_factory=set)


async def post(api: Api, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    status, reply = await api.call("POST", path, token, json=body)
    assert status == 201, (path, status, reply)
    return reply


async def populate(site: Site, api: Api, name: str, alias: str) -> Org:
    """Everything an org holds, made by its admin through the interface."""
    tenant = await new_tenant(site, api, name, alias)
    org = Org(tenant, {"org": tenant.org_id})
    admin = await tenant.token()
    org.ids["project"] = (await post(api, admin, "/v2/projects", {"name": f"{name} P"}))["project"][
        "id"
    ]
    org.ids["group"] = (
        await post(api, admin, "/v2/groups", {"name": "G", "project_id": org.ids["project"]})
    )["group"]["id"]
    org.ids["role"] = (await post(api, admin, "/v2/roles", {"name": "R"}))["role"]["id"]
    template = {"name": "T", "subject": "S", "body_txt": "t", "body_html": "h"}
    template["project_id"] = org.ids["project"]
    org.ids["template"] = (await post(api, admin, "/v2/email/templates", template))["template"][
        "id"
    ]
    for who in ("plain", "group_admin", "project_admin"):
        body = {"email": f"{who}@{alias}.test", "username": f"{who}-{alias}", "password": PASSWORD}
        org.ids[who] = (await post(api, admin, "/v2/users", body))["user"]["id"]
    org.ids["user"] = org.ids["plain"]
    device = (await post(api, admin, "/v2/devices", {"name": f"{name} sensor"}))["device"]
    org.ids["device"] = device["id"]
    opened = await post(api, admin, f"/v2/devices/{device['id']}/tunnels", {"services": ["SSH"]})
    org.ids["tunnel"] = opened["tunnel"]["uuid"]
    site.services.commands.persistent = lambda _: True  # as if it kept a session: queued
    status, queued = await api.call(
        "POST", f"/v2/devices/{device['id']}/commands", admin, json={"name": "n", "queue": True}
    )
    assert status == 202, queued
    org.ids["command"] = queued["command"]["request_id"]
    claim = {"name": "C", "project_id": org.ids["project"]}
    org.ids["claim"] = (await post(api, admin, "/v2/provisioning/claims", claim))["claim"]["id"]
    job = {"document": {"v": 1}, "targets": {"device_ids": [device["id"]]}}
    org.ids["job"] = (await post(api, admin, "/v2/jobs", job))["job"]["id"]
    await post(
        api,
        admin,
        f"/v2/groups/{org.ids['group']}/access/{org.ids['group_admin']}",
        {"is_admin": True},
    )
    await post(
        api, admin, f"/v2/groups/{org.ids['group']}/access/{org.ids['plain']}", {"can_read": True}
    )
    await post(
        api,
        admin,
        f"/v2/projects/{org.ids['project']}/access/{org.ids['project_admin']}",
        {"is_admin": True},
    )
    await post(
        api, admin, f"/v2/roles/{org.ids['role']}/access/{org.ids['plain']}", {"can_read": True}
    )
    org.ids["data"] = f"{alias}-readings/1"
    status, reply = await api.call(
        "PUT", f"/v2/groups/{org.ids['group']}/data/{org.ids['data']}", admin, json={"value": 1}
    )
    assert status == 200, reply
    org.ids["file"] = f"reports/{alias}.txt"
    where = f"/v2/groups/{org.ids['group']}/files/{org.ids['file']}"
    status, reply = await api.call("PUT", where, admin, json={"unicode_1": name})
    assert status == 200, reply
    uploaded = await api.client.put(relative(reply["url"]), data=f"{name} summary".encode())
    assert uploaded.status == 200
    trashed = (await post(api, admin, "/v2/groups", {"name": "Gone"}))["group"]["id"]
    status, _ = await api.call("DELETE", f"/v2/groups/{trashed}", admin)
    assert status == 200
    org.ids["trashed"] = trashed
    org.tokens["org_admin"] = admin
    for who in ("plain", "group_admin", "project_admin"):
        org.tokens[who] = await tenant.token(f"{who}@{alias}.test")
    org.tokens["staff"] = await api.token(scope=tenant.org_id)
    org.tokens["device"] = device["api_key"]
    org.all_ids = {*org.ids.values(), tenant.admin_id}
    return org


def concrete(path: str, ids: dict[str, str]) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        assert name in PARAMS, f"the isolation sweep does not know path parameter {{{name}}}"
        if name == "path":
            return ids["data" if "/data/" in path else "file"]
        return ids[PARAMS[name]]

    return re.sub(r"{(\w+)(?::[^{}]*)?}", fill, path)  # `{path:.*}` too


async def test_no_response_to_one_org_names_anything_of_the_other(site: Site, api: Api) -> None:
    mine = await populate(site, api, "Alpha", "alpha")
    theirs = await populate(site, api, "Beta", "beta")
    leaks, wrong = [], []
    for route in GETS:
        if "{name}" in route.path:
            continue  # static assets
        own, foreign = concrete(route.path, mine.ids), concrete(route.path, theirs.ids)
        for actor, token in mine.tokens.items():
            if actor == "staff" and route.auth == "staff":
                continue  # installation-level routes: staff see every org by design
            status, body = await api.call("GET", own, token)
            text = str(body)
            leaks += [f"{actor} GET {own} -> {i}" for i in theirs.all_ids if i in text]
            if foreign != own:
                status, body = await api.call("GET", foreign, token)
                if status not in (403, 404):
                    wrong.append(f"{actor} GET {foreign} -> {status}")
                leaks += [
                    f"{actor} GET {foreign} -> {i}"
                    for i in theirs.all_ids
                    if i in str(body) and i not in foreign
                ]
    assert leaks == []
    assert wrong == []
