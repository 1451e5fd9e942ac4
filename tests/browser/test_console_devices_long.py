"""The Devices pages' full matrix (`make test-long`), on a site of 10,000 more devices:
every caller kind on the list and a device, what each may not do not offered; creating a
device (its key shown once, then gone), resetting the key, suspending, deleting, the IoT
scopes editor (the server's 400, then a save), the twin's editor through a version
conflict, commands answered (and not) by a real paho-mqtt device, the tunnel line,
presence moving live, the stream closed when the page is left and at sign-out, paging on
the server, the standing of a nameless device in a group of a thousand read in one request,
and the denials (a plain user, another org's device)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from edge.app import Site
from tests.browser.console import PEOPLE, WAIT, Console, LiveServer
from tests.browser.devices import (
    PahoDevice,
    asked,
    fill_json,
    held,
    hold_responses,
    open_streams,
    release,
    release_first,
    until,
    wait_attribute,
    wait_present,
    wait_text,
)
from tests.browser.world_devices import DESIRED, give_twin, many_devices
from tests.ports import free_port
from tests.tenants import PASSWORD
from tests.world import World

pytestmark = pytest.mark.long
MANY = 10_000
WARD_MANY = 1_000  # devices in Ward before the nameless one: more than a page of 1,000
FIRST_VIEW_MS = 1000
SERVER_SETTINGS = {"mqtt_port": free_port(), "mqtt_tls_port": free_port()}  # TLS: the bundle
ELSEWHERE: dict[str, str] = {}  # a device of Other, the second organization; Ward's nameless
# Who sees Devices, whether they may create one, and a device they may read
SEES = {
    "staff_in_clinic": (True, "device_plain"),
    "org_admin": (True, "device_loner"),
    "project_admin": (True, "device_member"),
    "group_admin": (False, "device_member"),
}
ACTIONS = ["delete-device", "reset-certificate", "reset-key", "suspend-device"]  # sorted


def seed(site: Site, world: World) -> None:
    """10,000 more devices in Clinic, and one in Other, straight to storage; 1,000 more
    in Ward, then one with no name (an empty one) in Ward, made last."""
    org_id, ward = world.tenant.org_id, world.org_group_id
    many_devices(site, org_id, MANY)
    ELSEWHERE["device"] = many_devices(site, world.other.org_id, 1)[0]
    many_devices(site, org_id, WARD_MANY, ward)
    ELSEWHERE["nameless"] = many_devices(site, org_id, 1, ward, names=[""])[0]


@pytest.fixture(scope="module", autouse=True)
def twin(live: LiveServer, world_template: World) -> None:
    give_twin(live, world_template)


def listed(live: LiveServer, token: str, **query: str) -> list[dict[str, Any]]:
    params = "&".join(f"{k}={v}" for k, v in {"limit": "25", **query}.items())
    return live.call("GET", f"/v2/devices?{params}", token)["devices"]  # type: ignore[no-any-return]


def offered(console: Console) -> list[str]:
    return sorted(b.get_attribute("id") for b in console.all("#device-actions button"))


@pytest.mark.parametrize("who", list(PEOPLE))
def test_every_caller_on_devices_and_a_device(
    console: Console, live: LiveServer, world_template: World, who: str
) -> None:
    console.signed_in(who)
    if who not in SEES:
        assert "Devices" not in console.nav()
        return
    creates, device = SEES[who]
    console.visit("devices")
    assert console.violations() == [], who
    shown = [a.text for a in console.all("main td a")]
    assert shown == [d["name"] for d in listed(live, live.token(who))]
    assert bool(console.all("#create-device")) is creates
    console.visit("devices", world_template.devices[device])
    assert not console.all("main p.error:not(:empty)"), console.text()
    assert offered(console) == ACTIONS  # each of these is an admin of its device
    assert console.all("#twin-editor") and console.all("#send-command")
    assert console.violations() == [], (who, "device")
    assert console.errors() == []


def test_a_device_the_caller_only_reads_offers_nothing(
    console: Console, live: LiveServer, world_template: World
) -> None:
    """device_boss is an org admin: a project admin of its project reads it, never changes it."""
    device_id = world_template.devices["device_boss"]
    token = live.token("project_admin")
    assert live.status("GET", f"/v2/devices/{device_id}", token) == 200
    console.signed_in("project_admin")
    console.visit("devices", device_id)
    assert console.all("#read-only") and offered(console) == []
    assert not console.all("#twin-editor, #send-command, #open-tunnel, #scopes-editor")
    assert console.find("#twin-document").text  # the twin is still read
    status = live.status("POST", f"/v2/devices/{device_id}/reset-api-key", token)
    assert status == 403  # and the server refuses what is not offered


@pytest.mark.parametrize(
    ("who", "target"), [("group_admin", "device_loner"), ("org_admin", "elsewhere")]
)
def test_a_device_out_of_reach_shows_the_servers_refusal(
    console: Console, live: LiveServer, world_template: World, who: str, target: str
) -> None:
    device_id = ELSEWHERE["device"] if target == "elsewhere" else world_template.devices[target]
    assert live.status("GET", f"/v2/devices/{device_id}", live.token(who)) == 404
    console.signed_in(who)
    console.visit("devices", device_id)
    assert console.find("main p.error").text  # the server's message, not a page
    assert not console.all("#device-page")


def test_a_plain_user_opens_no_device_by_its_url(console: Console, world_template: World) -> None:
    console.signed_in("plain")
    target = f"#/devices/{world_template.devices['device_loner']}"
    console.after_page_shows(lambda: console.driver.execute_script(f"location.hash = '{target}'"))
    assert console.find("main").get_attribute("data-page") == "overview"


def test_create_shows_the_key_once(console: Console, live: LiveServer) -> None:
    admin = live.token("org_admin")
    console.signed_in("org_admin")
    console.visit("devices")
    console.find("#create-device-box summary").click()
    console.type("#create-device input[name=device_name]", "console-made")
    console.find("#create-device button[type=submit]").click()
    key = console.wait_for("#once-api-key").text
    device_id = console.find("#new-device-id").text
    assert key.startswith("edk_") and "BEGIN CERTIFICATE" in console.find("#once-certificate").text
    assert live.status("GET", f"/v2/devices/{device_id}", key) == 200  # the key works
    assert console.find("#once-only .warning").text and console.all("#once-only button.copy")
    assert console.violations() == []
    certificates = f"/v2/provisioning/devices/{device_id}/certificates"
    console.find("#download-bundle").click()
    assert int(wait_present(console, "#download-bundle", "data-downloaded")) > 0
    issued = live.call("GET", certificates, admin)["certificates"]
    assert len(issued) == 2  # the bundle's certificate issued, the first one superseded
    console.after_page_shows(lambda: console.find("#open-new-device").click())
    assert console.find("#device-page").get_attribute("data-device") == device_id
    assert key not in console.driver.page_source
    console.visit("devices")
    assert key not in console.driver.page_source and not console.all("#once-only")
    assert console.errors() == []  # nothing refused on the way (the download, the CSP)


def test_reset_key_suspend_and_delete(console: Console, live: LiveServer) -> None:
    admin = live.token("org_admin")
    made = live.call("POST", "/v2/devices", admin, name="to-reset")["device"]
    device_id, old_key = made["id"], made["api_key"]
    console.signed_in("org_admin")
    console.visit("devices", device_id)
    console.find("#reset-key").click()
    key = console.wait_for("#once-api-key").text
    assert key != old_key and live.status("GET", f"/v2/devices/{device_id}", key) == 200
    assert live.status("GET", f"/v2/devices/{device_id}", old_key) == 401
    console.find("#secrets-done").click()
    assert key not in console.driver.page_source
    certificates = f"/v2/provisioning/devices/{device_id}/certificates"
    first = live.call("GET", certificates, admin)["certificates"]
    console.find("#reset-certificate").click()
    certificate = console.wait_for("#once-certificate").text
    assert (
        "BEGIN CERTIFICATE" in certificate
        and "PRIVATE KEY" in console.find("#once-private-key").text
    )
    assert len(live.call("GET", certificates, admin)["certificates"]) == len(first) + 1
    console.find("#secrets-done").click()
    assert not console.all("#once-certificate")
    console.after_page_shows(lambda: console.find("#suspend-device").click())
    assert live.call("GET", f"/v2/devices/{device_id}", admin)["device"]["is_active"] is False
    assert console.find("#device-suspended").text == "yes"
    console.after_page_shows(lambda: console.find("#reactivate-device").click())
    assert live.call("GET", f"/v2/devices/{device_id}", admin)["device"]["is_active"] is True
    console.find("#delete-device").click()
    console.after_page_shows(lambda: console.find("#confirm-delete").click())
    assert console.find("main").get_attribute("data-page") == "devices"
    assert live.status("GET", f"/v2/devices/{device_id}", admin) == 404


def test_the_scopes_editor_shows_the_servers_400_then_saves(
    console: Console, live: LiveServer, world_template: World
) -> None:
    device_id = world_template.devices["device_loner"]
    console.signed_in("org_admin")
    console.visit("devices", device_id)
    console.find("#add-scope").click()
    console.type("#scope-0", "/alarms/#")
    console.find("#scope-subscribe-0").click()
    console.find("#scopes-editor button[type=submit]").click()
    message = wait_text(console, "#scopes-editor p.error", "scope")
    assert "#" in message or "+" in message  # the server's rule, as it wrote it
    device = live.call("GET", f"/v2/devices/{device_id}", live.token("org_admin"))["device"]
    assert device["iot_scopes"] == {}
    console.type("#scope-0", "/alarms")
    console.after_page_shows(lambda: console.find("#scopes-editor button[type=submit]").click())
    device = live.call("GET", f"/v2/devices/{device_id}", live.token("org_admin"))["device"]
    assert device["iot_scopes"] == {"/alarms": {"can_publish": False, "can_subscribe": True}}
    assert console.find("#scope-0").get_attribute("value") == "/alarms"


def test_the_twin_editor_meets_a_version_conflict(
    console: Console, live: LiveServer, world_template: World
) -> None:
    admin = live.token("org_admin")
    device_id = world_template.devices["device_loner"]
    path = f"/v2/devices/{device_id}/twin"
    before = live.call("GET", path, admin)["twin"]
    console.signed_in("org_admin")
    console.visit("devices", device_id)
    assert console.find("#twin").get_attribute("data-version") == str(before["version"])
    leaf = console.find('#twin-leaves tr[data-key="led.color"]')
    assert '"red"' in leaf.find_element("css selector", ".desired").text
    assert '"blue"' in leaf.find_element("css selector", ".reported").text
    fill_json(console, "#twin-desired", {**before["desired"], "interval": 60})
    live.call("PATCH", path, admin, desired={"mode": "eco"})  # someone else, meanwhile
    console.find("#twin-editor button[type=submit]").click()
    current = wait_text(console, "#twin-conflict", "version")
    assert f"version {before['version'] + 1}, not {before['version']}" in current
    assert '"eco"' in console.find("#twin-current").text
    assert live.call("GET", path, admin)["twin"]["desired"]["interval"] == DESIRED["interval"]
    merged = console.driver.execute_script(
        "return JSON.parse(arguments[0].value)", console.find("#twin-desired")
    )
    assert merged == {**DESIRED, "mode": "eco", "interval": 60}  # theirs and mine, to check
    console.find("#twin-editor button[type=submit]").click()
    wait_attribute(console, "#twin", "data-version", str(before["version"] + 2))
    assert live.call("GET", path, admin)["twin"]["desired"] == merged
    assert console.find("#twin-conflict").text == ""


def open_twin(
    console: Console, live: LiveServer, world: World, name: str
) -> tuple[str, str, dict[str, Any]]:
    """The org admin's token, the device's twin path and its twin as read now, with the
    org admin's console on the device's page."""
    admin = live.token("org_admin")
    path = f"/v2/devices/{world.devices[name]}/twin"
    before = live.call("GET", path, admin)["twin"]
    console.signed_in("org_admin")
    console.visit("devices", world.devices[name])
    return admin, path, before


def test_a_device_reporting_meanwhile_does_not_block_a_desired_save(
    console: Console, live: LiveServer, world_template: World
) -> None:
    """The twin's version moves with `reported` too: a device that reported twice while the
    person edited makes the save a 409 that is no conflict (`desired` is as they read it),
    so the console sends the same change again at the new version; nothing reaches them."""
    name = "device_plain"
    admin, path, before = open_twin(console, live, world_template, name)
    fill_json(console, "#twin-desired", {**before["desired"], "interval": 100})
    for n in range(2):  # the device reports, as it does every few seconds
        live.call("PATCH", path, world_template.keys[name], reported={"uptime": n})
    console.find("#twin-editor button[type=submit]").click()
    wait_attribute(console, "#twin", "data-version", str(before["version"] + 3))
    assert live.call("GET", path, admin)["twin"]["desired"] == {
        **before["desired"],
        "interval": 100,
    }
    assert console.find("#twin-conflict").text == ""
    assert '"interval": 100' in console.find("#twin-desired").get_attribute("value")


def test_a_device_that_keeps_reporting_is_said_so_when_the_resends_run_out(
    console: Console, live: LiveServer, world_template: World
) -> None:
    """Every answer to the twin is held until the device has reported once more, so each
    of the save's tries (the first and its three resends) is a 409 from `reported` alone.
    The console said "The twin changed meanwhile" then, though `desired` had not changed:
    it says the device kept reporting and nothing was saved, and keeps the change. (A
    device reporting on a timer, every 100 ms, would not force it: four tries over loopback
    can all fit between two reports.)"""
    name = "device_plain"
    admin, path, before = open_twin(console, live, world_template, name)
    wait_attribute(console, "#twin", "data-version", str(before["version"]))
    hold_responses(console, path)
    edited = {**before["desired"], "interval": 250}
    fill_json(console, "#twin-desired", edited)
    live.call("PATCH", path, world_template.keys[name], reported={"uptime": -1})
    console.find("#twin-editor button[type=submit]").click()
    conflict = "#twin-conflict"
    for n in range(100):  # each answer was read before this report: the next try is stale
        WebDriverWait(console.driver, WAIT).until(
            lambda d: held(console) or console.find(conflict).text
        )
        if console.find(conflict).text:
            break
        live.call("PATCH", path, world_template.keys[name], reported={"uptime": n})
        release_first(console)
    release(console)
    message = console.find(conflict).text
    assert "The device kept reporting" in message and "Nothing was saved" in message
    assert "try again" in message and "changed meanwhile" not in message
    assert live.call("GET", path, admin)["twin"]["desired"] == before["desired"]
    assert json.loads(console.find("#twin-desired").get_attribute("value")) == edited


def dropped(console: Console, count: str) -> None:
    """Wait until the router has dropped `count` pages that ended loading too late."""
    WebDriverWait(console.driver, WAIT).until(
        lambda d: console.find("main").get_attribute("data-dropped") == count
    )


def test_a_device_page_loading_at_sign_out_is_not_shown_after_it(
    console: Console, world_template: World
) -> None:
    device_id = world_template.devices["device_loner"]
    console.signed_in("org_admin")
    hold_responses(console, f"{device_id}/twin")
    console.driver.execute_script(f"location.hash = '#/devices/{device_id}'")
    WebDriverWait(console.driver, WAIT).until(lambda d: held(console) == 1)
    console.find("#sign-out").click()
    console.wait_page("sign-in")
    release(console)
    dropped(console, "1")
    assert console.all("#sign-in") and not console.all("#device-page")
    assert console.find("main").get_attribute("data-page") == "sign-in"


def test_a_device_page_loading_late_does_not_replace_the_next_one(
    console: Console, world_template: World
) -> None:
    """Device A's page is slow, the person goes on to B: A's page, once loaded, is dropped,
    not shown under B's address with its buttons acting on A, and opens no live stream
    (one per dropped page would soon reach the account's events_max_streams)."""
    a, b = world_template.devices["device_loner"], world_template.devices["device_plain"]
    console.signed_in("org_admin")
    hold_responses(console, f"{a}/twin")
    console.driver.execute_script(f"location.hash = '#/devices/{a}'")
    WebDriverWait(console.driver, WAIT).until(lambda d: held(console) == 1)
    console.visit("devices", b)
    assert console.find("#device-page").get_attribute("data-device") == b
    release(console)
    dropped(console, "1")
    assert [p.get_attribute("data-device") for p in console.all("#device-page")] == [b]
    assert console.driver.execute_script("return location.hash") == f"#/devices/{b}"
    assert asked(console, f"/v2/events?kinds=presence%2Ctwins&device_id={b}")
    assert asked(console, f"device_id={a}") == []


def test_a_holder_of_device_permissions_in_a_group_may_update_its_device(
    console: Console, live: LiveServer, world_template: World
) -> None:
    """group_device_perms holds every device permission on Ward, and device_member is in
    Ward: the device's own answer names no groups, yet the console offers the update (the
    twin's editor, commands) and the deletion, as the server allows them; device_loner, in
    no group, it may only read."""
    member, loner = world_template.devices["device_member"], world_template.devices["device_loner"]
    token = live.token_for("clinic", "group_device_perms", PASSWORD)
    assert live.status("GET", f"/v2/devices/{loner}", token) == 404
    console.start()
    console.enter("clinic", "group_device_perms", PASSWORD)
    console.wait_page("overview")
    console.visit("devices", member)
    assert not console.all("#read-only")
    assert offered(console) == ["delete-device", "reset-certificate", "reset-key"]
    assert console.all("#twin-editor") and console.all("#send-command")
    assert not console.all("#scopes-editor, #open-tunnel")  # admins only
    path = f"/v2/devices/{member}/twin"
    fill_json(console, "#twin-desired", {"held_by": "group"})
    console.find("#twin-editor button[type=submit]").click()
    until(
        lambda: live.call("GET", path, token)["twin"]["desired"].get("held_by") == "group", "saved"
    )


def test_a_nameless_device_in_a_large_group_costs_one_request_to_stand_towards(
    console: Console, live: LiveServer
) -> None:
    """group_device_perms holds device permissions in Ward, which holds 1,001 devices
    before the nameless one: whether it is in Ward is asked by its ID, one request (the
    group's list read by name read every page of the group when there was no name)."""
    nameless = ELSEWHERE["nameless"]
    token = live.token_for("clinic", "group_device_perms", PASSWORD)
    assert live.call("GET", f"/v2/devices/{nameless}", token)["device"]["name"] == ""
    console.start()
    console.enter("clinic", "group_device_perms", PASSWORD)
    console.wait_page("overview")
    hold_responses(console, "/no-such-path/")  # holds nothing: records what is asked
    console.visit("devices", nameless)
    standing = asked(console, "group_id=")
    assert len(standing) == 1, standing
    assert f"&id={nameless}" in standing[0]
    assert not console.all("#read-only")  # the answer was right: Ward's rights reach it
    assert offered(console) == ["delete-device", "reset-certificate", "reset-key"]


@pytest.fixture
def paho(live: LiveServer, world_template: World) -> Any:
    made: list[PahoDevice] = []

    def connect(answer: bool = True) -> PahoDevice:
        name = "device_plain"
        device = PahoDevice(
            world_template.devices[name],
            world_template.keys[name],
            world_template.tenant.org_id,  # an org-level device: the org is its root
            int(SERVER_SETTINGS["mqtt_port"]),
            answer,
        )
        made.append(device.connect())
        return device

    yield connect
    for device in made:
        device.disconnect()


def send_command(console: Console, name: str, payload: dict[str, Any], timeout: int) -> str:
    console.type("#send-command input[name=command_name]", name)
    fill_json(console, "#command-payload", payload)
    console.type("#send-command input[name=command_timeout]", str(timeout))
    console.find("#send-command button[type=submit]").click()
    return wait_present(console, "#command-result", "data-status")


def test_a_command_is_answered_by_a_paho_device_or_times_out(
    console: Console, live: LiveServer, world_template: World, paho: Any
) -> None:
    device_id = world_template.devices["device_plain"]
    console.signed_in("org_admin")
    console.visit("devices", device_id)
    assert send_command(console, "ping", {"n": 1}, 10) == "409"  # offline
    assert "409" in console.find("#command-result").text
    device = paho()
    assert send_command(console, "ping", {"n": 2}, 10) == "200"
    assert device.commands[-1]["name"] == "ping" and device.commands[-1]["payload"] == {"n": 2}
    assert '"echo"' in console.find("#command-result pre.reply").text
    wait_text(console, "#recent-commands", "answered")
    device.disconnect()
    silent = paho(answer=False)
    assert send_command(console, "sleep", {}, 1) == "504"
    assert silent.commands[-1]["name"] == "sleep"
    commands = live.call("GET", f"/v2/devices/{device_id}/commands", live.token("org_admin"))
    states = [c["state"] for c in commands["commands"]]
    assert states[:2] == ["timed_out", "answered"]
    wait_text(console, "#recent-commands", "timed_out")
    filtered(console, "#recent-commands", "commands-state", "timed_out")
    assert first_cells(console, "#recent-commands") == ["sleep"]
    queued = [f"later-{i}" for i in range(10)]
    for name in queued:  # queued for the silent device: 10, a page of the console's list
        live.call(
            "POST",
            f"/v2/devices/{device_id}/commands",
            live.token("org_admin"),
            name=name,
            queue=True,
        )
    filtered(console, "#recent-commands", "commands-state", "")
    assert sorted(first_cells(console, "#recent-commands")) == queued  # the newest 10
    next_page = "#recent-commands .pager button:nth-of-type(2)"
    in_list(console, "#recent-commands", lambda: console.find(next_page).click())
    assert first_cells(console, "#recent-commands")[:2] == ["sleep", "ping"]


def test_a_waiting_command_is_canceled_from_its_row(
    console: Console, live: LiveServer, world_template: World, paho: Any
) -> None:
    """A command queued for a device that does not answer has a Cancel button (a second
    click confirms); the server then holds it `canceled`, and its row offers nothing more.
    Only rows of commands still waiting offer it."""
    device_id = world_template.devices["device_plain"]
    admin = live.token("org_admin")
    paho(answer=False)
    base = f"/v2/devices/{device_id}/commands"
    waiting = live.call("POST", base, admin, name="reboot-later", queue=True)["command"]
    console.signed_in("org_admin")
    console.visit("devices", device_id)
    wait_text(console, "#recent-commands tbody", "reboot-later")
    button = f'#recent-commands button[data-cancel="{waiting["request_id"]}"]'
    console.find(button).click()
    assert console.find(button).text == "Really cancel?"
    assert live.call("GET", f"{base}/{waiting['request_id']}", admin)["command"]["state"] in (
        "queued",
        "delivered",
    )  # not on the first click
    console.find(button).click()
    until(lambda: not console.all(button), "the list shown again, without the Cancel")
    assert live.call("GET", f"{base}/{waiting['request_id']}", admin)["command"]["state"] == (
        "canceled"
    )
    shown = {}  # name: (state, offers Cancel), for every row (earlier tests' commands too)
    for row in console.all("#recent-commands tbody tr"):
        cells = [td.text for td in row.find_elements("css selector", "td")]
        offers = bool(row.find_elements("css selector", "button[data-cancel]"))
        shown[cells[0]] = (cells[1], offers)
    assert shown["reboot-later"] == ("canceled", False)
    assert all(offers == (state in ("queued", "delivered")) for state, offers in shown.values())


def test_presence_moves_live_on_the_list(
    console: Console, world_template: World, paho: Any
) -> None:
    device_id = world_template.devices["device_plain"]
    console.signed_in("org_admin")
    console.visit("devices")
    # The server takes at most 256 characters of search: the box takes no more.
    assert console.find("#devices-search").get_attribute("maxlength") == "256"
    console.type("#devices-search", "device_plain")
    console.after_list_loads(
        lambda: console.find("main form[role=search] button[type=submit]").click()
    )
    dot = f'#devices-page [data-online-of="{device_id}"]'
    wait_attribute(console, "#devices-page", "data-live", "open")
    assert console.find(dot).get_attribute("data-online") == "false"
    loads = console.find("main section.list").get_attribute("data-loads")
    device = paho()
    wait_attribute(console, dot, "data-online", "true")
    assert console.find(dot).text == "online"
    device.disconnect()
    wait_attribute(console, dot, "data-online", "false")
    assert console.find("main section.list").get_attribute("data-loads") == loads  # not reloaded


def test_the_stream_closes_when_the_page_is_left_and_at_sign_out(
    console: Console, live: LiveServer, world_template: World
) -> None:
    admin_id = world_template.tenant.admin_id
    console.signed_in("org_admin")
    console.visit("devices")
    until(lambda: open_streams(live, admin_id) == 1, "the list's stream open")
    console.visit("overview")
    until(lambda: open_streams(live, admin_id) == 0, "the stream closed on leaving")
    console.visit("devices", world_template.devices["device_loner"])
    until(lambda: open_streams(live, admin_id) == 1, "the device's stream open")
    urls = console.driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(n => n.includes('/v2/events'))"
    )
    assert urls and all("token" not in u and "eyJ" not in u for u in urls)  # never in a URL
    console.find("#sign-out").click()
    console.wait_page("sign-in")
    until(lambda: open_streams(live, admin_id) == 0, "the stream closed at sign-out")


def test_the_tunnel_line_is_the_one_to_run(
    console: Console, live: LiveServer, world_template: World
) -> None:
    device_id = world_template.devices["device_loner"]
    console.signed_in("org_admin")
    console.visit("devices", device_id)
    console.type("#open-tunnel input[name=tunnel_services]", "SSH, HTTP")
    console.find("#open-tunnel button[type=submit]").click()
    token = console.wait_for("#once-tunnel-token").text
    tunnels = live.call("GET", f"/v2/devices/{device_id}/tunnels", live.token("org_admin"))
    [tunnel] = tunnels["tunnels"]
    assert console.find("#tunnel-line-0").text == (
        f"EDGE_TUNNEL_TOKEN={token} edge tunnel connect --server {live.url}"
        f" --tunnel {tunnel['uuid']} --service SSH --listen 127.0.0.1:2222"
    )
    assert console.find("#tunnel-line-1").text.endswith("--service HTTP --listen 127.0.0.1:2223")
    # the token is the tunnel's: the connect route takes it (400: no service asked for)
    assert live.status("GET", f"/v2/tunnels/{tunnel['uuid']}/connect", token) == 400
    wait_text(console, "#open-tunnels", tunnel["uuid"])


def test_a_site_of_10000_devices_pages_on_the_server(
    console: Console, live: LiveServer, paho: Any
) -> None:
    paho()  # device_plain online
    console.signed_in("org_admin")
    console.visit("devices")
    assert console.page_ms("devices") < FIRST_VIEW_MS
    first = [a.text for a in console.all("main td a")]
    assert len(first) == 25
    assert int(console.find(".pager span").text.split()[0].replace(",", "")) > MANY
    console.after_list_loads(lambda: console.find(".pager button:nth-of-type(2)").click())
    second = [a.text for a in console.all("main td a")]
    assert len(second) == 25 and not set(second) & set(first)
    console.find("#devices-is_online").send_keys("Online now")
    console.after_list_loads(
        lambda: console.find("main form[role=search] button[type=submit]").click()
    )
    online = [d["name"] for d in listed(live, live.token("org_admin"), is_online="true")]
    assert "device_plain" in online
    assert [a.text for a in console.all("main td a")] == online


def in_list(console: Console, where: str, action: Callable[[], None]) -> None:
    """Do `action` and wait until the list in `where` showed its answer (the device page
    holds more than one list: console.after_list_loads watches the first)."""
    section = console.find(f"{where} section.list")
    before = section.get_attribute("data-loads")
    action()
    until(lambda: section.get_attribute("data-loads") != before, f"{where} loaded")


def filtered(console: Console, where: str, select: str, value: str) -> None:
    """Choose `value` in a list's filter and search."""

    def search() -> None:
        Select(console.find(f"#{select}")).select_by_value(value)
        console.find(f"{where} form[role=search] button[type=submit]").click()

    in_list(console, where, search)


def first_cells(console: Console, where: str) -> list[str]:
    return [td.text for td in console.all(f"{where} tbody tr td:first-child")]


def test_the_devices_jobs_link_to_the_job(
    console: Console, live: LiveServer, world_template: World
) -> None:
    admin = live.token("org_admin")
    device_id, key = world_template.devices["device_loner"], world_template.keys["device_loner"]
    targets = {"device_ids": [device_id]}
    job = live.call("POST", "/v2/jobs", admin, document={"op": "x"}, targets=targets)["job"]
    mine = f"/v2/devices/{device_id}/jobs"
    until(lambda: [j["job_id"] for j in live.call("GET", mine, key)["jobs"]] == [job["id"]], "out")
    live.call("PATCH", f"{mine}/{job['id']}", key, state="IN_PROGRESS", progress=40)
    console.signed_in("org_admin")
    console.visit("devices", device_id)
    [row] = console.all("#device-jobs tbody tr")  # one request: the device's executions
    link = row.find_element("css selector", "a")
    assert link.get_attribute("href").endswith(f"#/jobs/{job['id']}")
    cells = [td.text for td in row.find_elements("css selector", "td")]
    assert cells[1:4] == ["IN_PROGRESS", "IN_PROGRESS", "40%"]
    assert "1 in all" in console.find("#device-jobs .pager").text
    filtered(console, "#device-jobs", "executions-state", "SUCCEEDED")
    assert not console.all("#device-jobs tbody tr")  # filtered on the server
    console.signed_in("group_admin")  # reads the device, may list none of its jobs: empty
    console.visit("devices", world_template.devices["device_member"])
    assert not console.all("#device-jobs a") and not console.all("#device-jobs tbody tr")
    assert "0 in all" in console.find("#device-jobs .pager").text


def test_every_control_of_a_device_is_reached_by_keyboard(
    console: Console, world_template: World
) -> None:
    console.signed_in("org_admin")
    console.visit("devices", world_template.devices["device_loner"])
    controls = console.driver.execute_script(
        "return [...document.querySelectorAll('main a[href], main button, main input,"
        " main select, main textarea, main summary')]"
        ".filter(e => !e.disabled && e.checkVisibility())"
    )
    console.find("#device-name").click()  # the focus starts in the page, before its controls
    reached = set()
    for _ in range(len(controls) + 3):
        console.driver.switch_to.active_element.send_keys(Keys.TAB)
        reached.add(console.driver.switch_to.active_element)
    missing = [c.get_attribute("outerHTML")[:80] for c in controls if c not in reached]
    assert missing == []
