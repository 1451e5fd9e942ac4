"""The Devices pages of the console in `make test`: each kind of caller opens Devices and a
device it may read, with no serious or critical axe-core violation and no error in the
browser's log; what a caller may not do is not offered; leaving a page (or the router
dropping it) ends every stream, observer and timer it set."""

from __future__ import annotations

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.console import WAIT, Console, LiveServer
from tests.browser.devices import (
    held,
    hold_responses,
    open_streams,
    release,
    running,
    until,
    watch_running,
)
from tests.browser.world_devices import give_twin
from tests.world import World

NOTHING = {"observers": 0, "intervals": 0}

# Who sees Devices, and the device each opens (one it may read)
OPENS = {
    "org_admin": "device_loner",
    "project_admin": "device_member",
    "group_admin": "device_member",
    "staff_in_clinic": "device_plain",
}


@pytest.fixture(scope="module", autouse=True)
def twin(live: LiveServer, world_template: World) -> None:
    give_twin(live, world_template)


@pytest.mark.parametrize("who", list(OPENS))
def test_each_caller_opens_devices_and_a_device(
    console: Console, world_template: World, who: str
) -> None:
    console.signed_in(who)
    assert "Devices" in console.nav()
    console.visit("devices")
    names = [a.text for a in console.all("main td a")]
    assert world_template.devices and names, who
    assert console.violations() == [], (who, "devices")
    device_id = world_template.devices[OPENS[who]]
    console.visit("devices", device_id)
    assert console.find("#device-page").get_attribute("data-device") == device_id
    assert console.find("#twin-document").text
    assert console.violations() == [], (who, "device")
    assert console.errors() == []


def test_a_plain_user_is_not_shown_devices(console: Console, world_template: World) -> None:
    console.signed_in("plain")
    assert "Devices" not in console.nav()
    target = f"#/devices/{world_template.devices['device_loner']}"
    console.after_page_shows(lambda: console.driver.execute_script(f"location.hash = '{target}'"))
    assert console.find("main").get_attribute("data-page") == "overview"  # shown instead


def test_leaving_a_page_ends_what_it_kept_running(
    console: Console, live: LiveServer, world_template: World
) -> None:
    """A device page the router drops (it ended loading after the person moved on) leaves
    no observer behind; the Devices list, a device, a job (their live streams) and the
    Pulse (its minute's interval) leave nothing running once the person goes elsewhere."""
    admin_id = world_template.tenant.admin_id
    a, b = world_template.devices["device_loner"], world_template.devices["device_plain"]
    targets = {"device_ids": [b]}
    job = live.call("POST", "/v2/jobs", live.token("org_admin"), document={}, targets=targets)
    console.signed_in("org_admin")
    watch_running(console)
    hold_responses(console, f"{a}/twin")
    console.driver.execute_script(f"location.hash = '#/devices/{a}'")
    WebDriverWait(console.driver, WAIT).until(lambda d: held(console) == 1)
    before = console.find("main").get_attribute("data-dropped")
    console.visit("overview")
    release(console)
    WebDriverWait(console.driver, WAIT).until(
        lambda d: console.find("main").get_attribute("data-dropped") != before
    )
    assert running(console) == NOTHING  # the dropped page's
    for page in (("devices",), ("devices", b), ("jobs", job["job"]["id"])):
        console.visit(*page)
        until(lambda: open_streams(live, admin_id) == 1, f"{page}'s stream open")
    console.visit("pulse")
    assert running(console) == {"observers": 0, "intervals": 1}  # its minute
    console.visit("overview")
    assert running(console) == NOTHING
    until(lambda: open_streams(live, admin_id) == 0, "every stream closed on leaving")
