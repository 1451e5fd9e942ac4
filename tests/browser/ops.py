"""What the tests of the Claims, Jobs and Audit log pages do beside the Console driver
(tests/browser/console.py): open a page's create form, let the browser save downloads
into a folder, and a device that does its jobs over MQTT with real paho-mqtt."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.console import WAIT, Console


def open_form(console: Console, form_id: str) -> None:
    """Unfold the <details> holding a create form (as a person clicks its summary)."""
    if not console.find(f"#{form_id}").is_displayed():
        console.driver.execute_script(
            "arguments[0].closest('details').querySelector('summary').click()",
            console.find(f"#{form_id}"),
        )


def after_list_renews(console: Console, action: Callable[[], None]) -> None:
    """Do `action` (a filter, a change) after which the page shows a new list in place of
    the old one (made with the new filter, or read again), and wait until it has its
    first page."""
    old = console.find("main section.list")
    action()

    def renewed(_: Any) -> bool:
        lists = console.all("main section.list")
        return bool(lists) and lists[0] != old and lists[0].get_attribute("data-loads") == "1"

    WebDriverWait(console.driver, WAIT).until(renewed)


def make_claim(console: Console, name: str, uses: str, template: str = "") -> None:
    """The Claims page's create form, filled in and sent; the claim shown once after."""
    console.visit("claims")
    open_form(console, "create-claim")
    console.type("#create-claim input[name=claim_name]", name)
    console.type("#create-claim input[name=max_uses]", uses)
    if template:
        console.type("#claim-template", template)
    after_list_renews(console, lambda: console.find("#create-claim button[type=submit]").click())
    console.wait_for("#claim-secret")


def claim_created(console: Console, target: Path) -> Path:
    """The picture of a claim just made, its secret and QR code shown (make screenshots)."""
    console.signed_in("org_admin")
    make_claim(console, "Ward 3 sensors", "12", '{"tags": ["ward-3"]}')
    console.driver.execute_script("document.getElementById('claim-created').scrollIntoView()")
    path = target / "claim-created.png"
    console.driver.save_screenshot(str(path))
    return path


CONTROLS = (
    "[...document.querySelectorAll('a[href], button, input, select, textarea, summary,"
    ' [tabindex]:not([tabindex="-1"])\')].filter(e => !e.disabled && e.checkVisibility())'
)


def tab_walk(console: Console) -> tuple[list[str], list[str]]:
    """Tab through the page from its start: (the visible controls Tab never reached, the
    controls it reached without a visible focus ring), each as the start of its HTML.
    What has the focus is recorded in the page (focusin), where a date input's fields
    count as the input."""
    count = console.driver.execute_script(
        f"window.reached = new Set(); window.unringed = new Set(); const all = {CONTROLS};"
        "document.addEventListener('focusin', (e) => { window.reached.add(e.target);"
        " const s = getComputedStyle(e.target);"
        " if (s.outlineStyle === 'none' || parseFloat(s.outlineWidth) < 2)"
        " window.unringed.add(e.target); }, true);"
        "document.activeElement.blur(); window.focus(); return all.length"
    )
    for _ in range(3 * count + 5):  # a date input takes a Tab per field
        console.driver.switch_to.active_element.send_keys(Keys.TAB)
    missing, unringed = console.driver.execute_script(
        f"const all = {CONTROLS}; const html = (e) => e.outerHTML.slice(0, 80);"
        "return [all.filter((e) => !window.reached.has(e)).map(html),"
        " all.filter((e) => window.unringed.has(e)).map(html)]"
    )
    return list(missing), list(unringed)


def downloads_into(console: Console, folder: Path) -> None:
    """Let the browser save what the page downloads into `folder`, without asking."""
    console.driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior",
        {"behavior": "allow", "downloadPath": str(folder), "eventsEnabled": True},
    )


def downloaded(console: Console, folder: Path) -> Path:
    """The one file the browser finished saving into `folder`."""

    def done(_: Any) -> list[Path]:
        found = [p for p in folder.iterdir() if not p.name.endswith(".crdownload")]
        return found if len(found) == 1 else []

    return WebDriverWait(console.driver, WAIT).until(done)[0]


class PahoDevice:
    """A device on the embedded broker, with its ID and API key, doing its jobs: on each
    notify-next it moves the execution IN_PROGRESS at 50%, then, once `finish` is set,
    SUCCEEDED; what it got is kept in `executions`."""

    def __init__(self, port: int, device: dict[str, Any]) -> None:
        self.id = str(device["id"])
        self.topic = f"{device['root_scope']}/devices/{self.id}/jobs"
        self.finish = threading.Event()
        self.executions: queue.Queue[dict[str, Any]] = queue.Queue()
        self.subscribed = threading.Event()
        self.client = paho.Client(
            CallbackAPIVersion.VERSION2, client_id=f"console-{self.id}", protocol=paho.MQTTv311
        )
        self.client.username_pw_set(self.id, str(device["api_key"]))
        self.client.on_connect = self._connected
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", port, 30)
        self.client.loop_start()
        assert self.subscribed.wait(WAIT), "the device never subscribed"

    def _connected(self, client: paho.Client, *_: Any) -> None:
        client.subscribe(f"{self.topic}/notify-next", 1)

    def _message(self, client: paho.Client, _: Any, message: paho.MQTTMessage) -> None:
        execution = json.loads(message.payload).get("execution")
        if not execution:
            return
        self.executions.put(execution)
        threading.Thread(target=self._work, args=(execution,), daemon=True).start()

    def _work(self, execution: dict[str, Any]) -> None:
        job = execution["job_id"]
        step = {"state": "IN_PROGRESS", "progress": 50, "status_details": {"step": "download"}}
        self.client.publish(f"{self.topic}/{job}/update", json.dumps(step), 1)
        if self.finish.wait(WAIT * 4):
            done = {"state": "SUCCEEDED", "status_details": {"step": "installed"}}
            self.client.publish(f"{self.topic}/{job}/update", json.dumps(done), 1)

    def stop(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()
