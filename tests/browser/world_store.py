"""What the Data and Files pages of the console show (part "store" of #35): entries and
files in Ward (the world's org-level group, tests/world.py), put there through the
interface as any client would, and the member's read-only grants on them.

    store = stock(live, world)   # once per server, before the pages are opened
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from typing import Any

from tests.browser.console import LiveServer
from tests.world import World

READ = {"can_read": True, "can_write": False, "can_update": False, "can_delete": False}
# Ward's data: path -> (value, index fields)
ENTRIES: dict[str, tuple[Any, dict[str, Any]]] = {
    "/sensors/t1": ({"celsius": 21.5, "ok": True}, {"unicode_1": "hall", "number_1": 21.5}),
    "/sensors/t2": ({"celsius": 19.0, "ok": True}, {"unicode_1": "cellar"}),
    "/sensors/attic/t3": ({"celsius": 12.25, "ok": False}, {"unicode_1": "attic"}),
    "/notes/today": ({"text": "Check the cellar sensor"}, {}),
    "/secret/code": ({"pin": "0000"}, {}),
}
# Ward's files: path -> bytes
FILES: dict[str, bytes] = {
    "/readme.txt": b"Ward's files: scans of the week.\n",
    "/scans/2026/week-48.txt": b"week 48\n" * 64,
    "/scans/intake.txt": b"intake form\n",
}
# The member (Ward access, no data or file paths in the world) may read these only.
MEMBER_DATA = {"/sensors": READ}
MEMBER_FILES = {"/scans": READ}


@dataclass(frozen=True)
class Store:
    ward: str  # Ward's group ID
    admin_token: str  # the org admin's, to check what the console did


def stock(live: LiveServer, world: World) -> Store:
    """Ward's entries and files, and the member's grants, through the interface."""
    token = live.token("org_admin")
    ward = world.org_group_id
    for path, (value, index) in ENTRIES.items():
        live.call("PUT", f"/v2/groups/{ward}/data{path}", token, value=value, **index)
    for path, content in FILES.items():
        reply = live.call("PUT", f"/v2/groups/{ward}/files{path}", token, content_type="text/plain")
        put_bytes(reply["url"], content)
    member = world.users["member"]
    live.call(
        "PATCH",
        f"/v2/groups/{ward}/access/{member}",
        token,
        data_paths=MEMBER_DATA,
        file_paths=MEMBER_FILES,
    )
    return Store(ward, token)


def bulk_put(live: LiveServer, store: Store, paths: list[str], value: Any) -> None:
    """One bulk PUT of `value` at each path of Ward (at most 100 paths)."""
    body = json.dumps({"method": "PUT", "jobs": [{"paths": paths, "value": value}]}).encode()
    request = urllib.request.Request(
        f"{live.url}/v2/groups/{store.ward}/data", data=body, method="POST"
    )
    request.add_header("Authorization", f"Bearer {store.admin_token}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def put_bytes(url: str, content: bytes) -> str:
    """PUT bytes to a presigned URL as any HTTP client does; the ETag it answers."""
    request = urllib.request.Request(url, data=content, method="PUT")
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(response.headers["ETag"])
