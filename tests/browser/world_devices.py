"""What the Devices pages of the console need in the world of tests/world.py: a twin with
both sections on a device (set over HTTP, the desired state by Clinic's admin and the
reported state by the device with its own key, as they would be), and many devices of
Clinic at once, straight to storage (the list of a site of 10,000 devices; a group of a
thousand devices)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge.access import values
from edge.accounts.device_kind import new_device
from edge.app import Site
from edge.devices import credentials
from edge.kernel import ids
from storage import access, devices
from storage.rows import Tx
from tests.browser.console import Console, LiveServer
from tests.world import World

TWIN_DEVICE = "device_loner"  # an org-level device of Clinic, owned by `owner`
DESIRED = {"interval": 30, "led": {"color": "red", "level": 3}}
REPORTED = {"interval": 30, "led": {"color": "blue"}, "firmware": "2.1"}


def give_twin(live: LiveServer, world: World, name: str = TWIN_DEVICE) -> dict[str, Any]:
    """The device's twin with DESIRED and REPORTED; the twin as the server answers it."""
    device_id = world.devices[name]
    path = f"/v2/devices/{device_id}/twin"
    live.call("PATCH", path, live.token("org_admin"), desired=DESIRED)
    reply = live.call("PATCH", path, world.keys[name], reported=REPORTED)
    return reply["twin"]  # type: ignore[no-any-return]


def many_devices(
    site: Site, org_id: str, count: int, group_id: str = "", names: list[str] | None = None
) -> list[str]:
    """`count` org-level devices of the org in one write (names `d<id>`, or `names`), no
    access; with `group_id`, each a member of that group (a plain group access)."""
    chosen = names or ["d" + ids.new_id() for _ in range(count)]
    made = [new_device(org_id, "", {"name": name, "api_key_hash": _key_hash()}) for name in chosen]
    grants = [
        values.new_access("group", group_id, d.id, "device", org_id, "", {})
        for d in made
        if group_id
    ]

    def write(conn: Tx) -> None:
        for device in made:
            devices.create(conn, device)
        for grant in grants:
            access.create(conn, grant)

    site.services.db.write_sync(write)
    return [d.id for d in made]


def _key_hash() -> str:
    return credentials.new_api_key()[1]


# The Devices pages in `make screenshots` (rows as tests/browser/screenshots.py's SHOTS)
SHOTS = (
    ("devices", "org_admin", ("devices",)),
    ("device", "org_admin", ("devices", "{loner}")),
)


def shot_names(world: World) -> dict[str, str]:
    """The names SHOTS uses in its pages' arguments."""
    return {"loner": world.devices[TWIN_DEVICE]}


def create_shot(console: Console, target: Path) -> Path:
    """device-create.png: a device just made, its key and certificate shown this once."""
    console.signed_in("org_admin")
    console.visit("devices")
    console.find("#create-device-box summary").click()
    console.type("#create-device input[name=device_name]", "pump-7")
    console.find("#create-device button[type=submit]").click()
    console.wait_for("#once-api-key")
    path = target / "device-create.png"
    console.driver.save_screenshot(str(path))
    return path
