"""What a person does on the Devices pages of the console, and a device that answers them:
a real paho-mqtt client signed in with the device's API key to the embedded broker of the
live server (tests/browser/console.py), answering its commands as docs/commands.md says."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.console import WAIT, Console, LiveServer

CONNECTED = 30  # seconds for the broker to take the device (not a speed bar)


@dataclass
class PahoDevice:
    """A device on the broker, as a real one: connects with its ID and API key and, with
    `answer`, replies to every command with status 200 and the command's own payload."""

    device_id: str
    key: str
    root: str  # its root scope: the org ID, or org/project
    port: int
    answer: bool = True
    commands: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.device_id)
        self.client.username_pw_set(self.device_id, self.key)
        self.client.on_message = self._on_message
        self.subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: self.subscribed.set()

    @property
    def own(self) -> str:
        return f"{self.root}/devices/{self.device_id}"

    def connect(self) -> PahoDevice:
        self.client.connect("127.0.0.1", self.port)
        self.client.loop_start()
        self.client.subscribe(f"{self.own}/commands/+", qos=1)
        assert self.subscribed.wait(CONNECTED), "the broker never took the subscription"
        return self

    def disconnect(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_message(self, _client: Any, _data: Any, message: mqtt.MQTTMessage) -> None:
        command = json.loads(message.payload)
        self.commands.append(command)
        if self.answer:
            reply = {"status": 200, "payload": {"echo": command["payload"]}}
            self.client.publish(f"{message.topic}/reply", json.dumps(reply), qos=1)


def fill_json(console: Console, selector: str, value: Any) -> None:
    """A textarea set to `value` as JSON (typed in full would be slow and indent itself)."""
    element = console.find(selector)
    console.driver.execute_script(
        "arguments[0].value = arguments[1]", element, json.dumps(value, indent=2)
    )


def wait_text(console: Console, selector: str, text: str) -> str:
    """Wait until the element shows `text`; what it shows then."""
    WebDriverWait(console.driver, WAIT).until(
        lambda d: console.all(selector) and text in console.find(selector).text
    )
    return str(console.find(selector).text)


def wait_attribute(console: Console, selector: str, name: str, value: str) -> None:
    """Wait until the element's attribute holds `value` (a live change shown)."""
    WebDriverWait(console.driver, WAIT).until(
        lambda d: console.all(selector) and console.find(selector).get_attribute(name) == value
    )


def wait_present(console: Console, selector: str, name: str) -> str:
    """Wait until the element has the attribute (an answer shown); its value."""
    WebDriverWait(console.driver, WAIT).until(
        lambda d: console.all(selector) and console.find(selector).get_attribute(name) is not None
    )
    return str(console.find(selector).get_attribute(name))


def open_streams(live: LiveServer, account_id: str) -> int:
    """How many live-changes streams the account holds open on the server now (the
    registry that enforces `events_max_streams`)."""
    streams = live.site.services.live.streams
    return live.on_loop(lambda: len(streams._open.get(account_id, ())))  # type: ignore[no-any-return]


def until(check: Callable[[], bool], what: str) -> None:
    """Wait for the server to show what the console did (the page may answer first)."""
    for _ in range(WAIT * 10):
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"never: {what}")


def hold_responses(console: Console, fragment: str) -> None:
    """Make the page's answers to requests whose URL holds `fragment` wait (a busy server)
    until `release`; `held` counts the answers waiting, `asked` lists every URL fetched."""
    console.driver.execute_script(
        "const fragment = arguments[0], real = window.fetch;"
        "window.__held = []; window.__asked = [];"
        "window.fetch = (url, opts) => { window.__asked.push(String(url));"
        " return String(url).includes(fragment)"
        " ? real(url, opts).then((res) => new Promise((go) => window.__held.push(() => go(res))))"
        " : real(url, opts); };",
        fragment,
    )


def asked(console: Console, fragment: str) -> list[str]:
    """The URLs fetched since `hold_responses` that hold `fragment`."""
    found = console.driver.execute_script(
        "return (window.__asked || []).filter((u) => u.includes(arguments[0]))", fragment
    )
    return [str(url) for url in found]


def held(console: Console) -> int:
    return int(console.driver.execute_script("return (window.__held || []).length"))


def release(console: Console) -> None:
    """Let every held answer through."""
    console.driver.execute_script("(window.__held || []).splice(0).forEach((go) => go())")


def release_first(console: Console) -> None:
    """Let the answer held longest through, alone (those held after it wait on)."""
    console.driver.execute_script("(window.__held || []).splice(0, 1).forEach((go) => go())")


def watch_running(console: Console) -> None:
    """From now on, keep what the page sets running that only ending it stops: each
    MutationObserver while it observes (until `disconnect`), each interval until it is
    cleared. Read with `running`."""
    console.driver.execute_script(
        "const seen = window.__running = {observers: new Set(), intervals: new Set()};"
        "const Observer = window.MutationObserver;"
        "window.MutationObserver = class extends Observer {"
        " observe(...a) { seen.observers.add(this); return super.observe(...a); }"
        " disconnect() { seen.observers.delete(this); return super.disconnect(); } };"
        "const every = window.setInterval, clear = window.clearInterval;"
        "window.setInterval = (...a) => {"
        " const id = every(...a); seen.intervals.add(id); return id; };"
        "window.clearInterval = (id) => { seen.intervals.delete(id); return clear(id); };"
    )


def running(console: Console) -> dict[str, int]:
    """How many observers observe and intervals run since `watch_running`."""
    found = console.driver.execute_script(
        "const seen = window.__running;"
        "return {observers: seen.observers.size, intervals: seen.intervals.size}"
    )
    return {name: int(count) for name, count in found.items()}
