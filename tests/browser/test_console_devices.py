"""The Devices pages of the console in `make test`: each kind of caller opens Devices and a
device it may read, with no serious or critical axe-core violation and no error in the
browser's log; what a caller may not do is not offered."""

from __future__ import annotations

import pytest

from tests.browser.console import Console, LiveServer
from tests.browser.world_devices import give_twin
from tests.world import World

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
