"""`make screenshots`: a 1280x800 picture of each console page into a folder (docs/console/),
taken in the real browser on the world of tests/world.py, built here from code as the test
factory builds it. docs/console.md shows them.

    python -m tests.browser.screenshots docs/console
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from tests.browser import world_devices, world_pulse
from tests.browser.console import Console, LiveServer
from tests.browser.ops import claim_created
from tests.browser.store import upload_shot
from tests.browser.world_ops import advance, build_ops
from tests.browser.world_store import stock
from tests.factory import new_site
from tests.world import World, build_clinic, with_cast, with_other

# (file name, who looks, page and its arguments; "" is the sign-in page)
SHOTS = (
    ("sign-in", "", ()),
    ("overview-staff", "staff", ("overview",)),
    ("organizations-staff", "staff", ("orgs",)),
    ("overview", "org_admin", ("overview",)),
    ("organization", "org_admin", ("orgs",)),
    ("users", "org_admin", ("users",)),
    ("user", "org_admin", ("users", "{member}")),
    ("groups", "org_admin", ("groups",)),
    ("group", "org_admin", ("groups", "{ward}")),
    ("group-access", "org_admin", ("groups", "{ward}", "access", "{group_admin}")),
    ("roles", "org_admin", ("roles",)),
    ("role", "org_admin", ("roles", "{nurses}")),
    ("account", "org_admin", ("account",)),
    ("overview-member", "member", ("overview",)),
    ("data", "org_admin", ("data", "{ward}")),
    ("data-entry", "org_admin", ("data", "{ward}", "entry", "sensors", "t1")),
    ("files", "org_admin", ("files", "{ward}")),
    ("pulse-staff", "staff", ("pulse",)),
    ("pulse", "org_admin", ("pulse",)),
    *world_devices.SHOTS,
    ("claims", "org_admin", ("claims",)),
    ("jobs", "org_admin", ("jobs",)),
    ("job", "org_admin", ("jobs", "{job}")),
    ("audit", "org_admin", ("audit",)),
)


async def _world(folder: Path) -> World:
    site = new_site(folder)
    try:
        return await with_cast(await with_other(await build_clinic(site)))
    finally:
        site.services.db.close()


def take(target: Path) -> list[Path]:
    """Every picture of SHOTS, written into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "data"
        world = asyncio.run(_world(folder))
        names = {
            "member": world.users["member"],
            "group_admin": world.users["group_admin"],
            "ward": world.org_group_id,
            "nurses": world.org_role_id,
            **world_devices.shot_names(world),
        }
        site = new_site(folder)
        world_pulse.seed(site, world)  # an hour of the site's pulse
        server = LiveServer(site).start()
        world_devices.give_twin(server, world)
        stock(server, world)  # Ward's data and files (tests/browser/world_store.py)
        console = Console.open(server)
        try:
            ops = build_ops(server, world)
            advance(server, ops)
            names["job"] = ops.job
            taken = [_shot(console, target, shot, names) for shot in SHOTS]
            return [
                *taken,
                world_devices.create_shot(console, target),
                upload_shot(console, target, world.org_group_id, Path(scratch)),
                claim_created(console, target),
            ]
        finally:
            console.close()
            server.stop()


def _shot(
    console: Console, target: Path, shot: tuple[str, str, tuple[str, ...]], names: dict[str, str]
) -> Path:
    name, who, page = shot
    if not who:
        console.start()
    else:
        console.signed_in(who)
        console.visit(page[0], *(part.format(**names) for part in page[1:]))
    path = target / f"{name}.png"
    console.driver.save_screenshot(str(path))
    return path


if __name__ == "__main__":
    for written in take(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/console")):
        print(written)
