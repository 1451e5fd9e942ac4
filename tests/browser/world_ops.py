"""What the console's Claims, Jobs and Audit log pages show (#35, part "ops"), made through
the interface as Clinic's org admin would make it, on a server of tests/browser/console.py:
two devices of Clinic's project Apollo, three claims (one revoked), a job of Apollo to the
devices (so that Apollo's admins see it too), and with them the audit events of all that,
beside the world's own sign-ins."""

from __future__ import annotations

import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from edge.app import Site
from edge.kernel import audit
from tests.browser.console import LiveServer
from tests.world import World

PUMPS = ("pump-1", "pump-2")
MANY_EVENTS = 10_000


@dataclass
class Ops:
    """What `build_ops` made: devices by name (their answers, with the one-time API key),
    the claims' and the job's IDs."""

    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: list[str] = field(default_factory=list)
    revoked: str = ""
    job: str = ""


def new_device(live: LiveServer, token: str, name: str, **body: Any) -> dict[str, Any]:
    """A device of the caller's organization, as POST /v2/devices answers it (with its key)."""
    made: dict[str, Any] = live.call("POST", "/v2/devices", token, name=name, **body)["device"]
    return made


def build_ops(live: LiveServer, world: World) -> Ops:
    admin = live.token("org_admin")
    ops = Ops()
    apollo = world.project_id
    for name in PUMPS:
        ops.devices[name] = new_device(live, admin, name, tags=["pump"], project_id=apollo)
    for name, uses in (("Line 4 pumps", 20), ("Spare sensors", 5), ("Old batch", 1)):
        claim = live.call("POST", "/v2/provisioning/claims", admin, name=name, max_uses=uses)
        ops.claims.append(claim["claim"]["id"])
    ops.revoked = ops.claims[-1]
    live.call("DELETE", f"/v2/provisioning/claims/{ops.revoked}", admin)
    ids = [d["id"] for d in ops.devices.values()]
    job = live.call(
        "POST",
        "/v2/jobs",
        admin,
        description="Pump firmware 2.0",
        project_id=apollo,
        document={"operation": "install", "version": "2.0"},
        targets={"device_ids": ids},
        policy={"max_in_progress": 1, "timeout_seconds": 3600},
    )
    ops.job = job["job"]["id"]
    return ops


def advance(live: LiveServer, ops: Ops) -> None:
    """The job moved along by its devices over HTTP with their API keys (for the
    pictures): pump-1 done, then pump-2, released next, in progress at 40%."""
    first, second = (ops.devices[name] for name in PUMPS)
    done, working = {"state": "SUCCEEDED"}, {"state": "IN_PROGRESS", "progress": 40}
    for device, update in ((first, done), (second, working)):
        released(live, device)
        live.call(
            "PATCH", f"/v2/devices/{device['id']}/jobs/{ops.job}", device["api_key"], **update
        )


def released(live: LiveServer, device: dict[str, Any]) -> None:
    """Once the scheduler (ticking each second) released the device's execution to it."""
    for _ in range(300):
        if live.call("GET", f"/v2/devices/{device['id']}/jobs", device["api_key"])["jobs"]:
            return
        time.sleep(0.1)  # arranging a picture, not a test: the next tick
    raise AssertionError(f"device {device['id']}'s execution was never released")


def many_events(site: Site, world: World, count: int = MANY_EVENTS) -> None:
    """`count` failed sign-ins at Clinic's member, straight to storage in one write: a log
    the Audit log page must page on the server."""
    member = ("user", world.users["member"])
    made = [
        audit.event("sign_in_failed", None, org_id=world.tenant.org_id, target=member)
        for _ in range(count)
    ]
    site.services.db.write_sync(lambda conn: audit.add(conn, *made))


def upload(live: LiveServer, token: str, group_id: str, path: str, content: bytes) -> None:
    """A file into a group's files store, as a client uploads one: the presigned URL of
    PUT /v2/groups/{group_id}/files/{path}, then the bytes to it."""
    answer = live.call(
        "PUT", f"/v2/groups/{group_id}/files/{path}", token, content_type="application/octet-stream"
    )
    url = answer["url"] if answer["url"].startswith("http") else live.url + answer["url"]
    request = urllib.request.Request(url, data=content, method="PUT")
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status in (200, 201, 204), response.status
