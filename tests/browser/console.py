"""The console in a real browser: the real server on a free loopback port, serving the
world of tests/world.py, and headless Chromium driven by Selenium through Debian's
chromedriver (the path given, so nothing is downloaded).

`LiveServer` runs the application on an event loop of its own thread, so that a module
of browser tests shares one server and one browser (starting Chromium costs a second).
`Console` is a browser on it, with what a person does: sign in as someone, open a page,
wait for it, run axe-core over it (tests/browser/vendor, pinned from the npm registry).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.error import HTTPError

from aiohttp import web
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from edge.app import Site, create_app
from tests.conftest import STAFF_PASSWORD
from tests.factory import new_site
from tests.ports import free_port
from tests.tenants import PASSWORD
from tests.world import World

DRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,800",
)
AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
WAIT = 30  # seconds a page may take to show before the test fails (not a speed bar)
# Who signs in how: (organization alias, login, password, as staff)
PEOPLE = {
    "staff": ("", "admin", STAFF_PASSWORD, True),
    "org_admin": ("clinic", "admin@clinic.test", PASSWORD, False),
    "project_admin": ("clinic", "project_admin", PASSWORD, False),
    "group_admin": ("clinic", "group_admin", PASSWORD, False),
    "member": ("clinic", "member", PASSWORD, False),
    "staff_in_clinic": ("clinic", "admin", STAFF_PASSWORD, True),
    "plain": ("clinic", "plain", PASSWORD, False),
}
# The console's pages by their title in the nav, and their names in the URL (#/users).
PAGES = {
    "Overview": "overview",
    "Organizations": "orgs",
    "Users": "users",
    "Groups": "groups",
    "Data": "data",
    "Files": "files",
    "Roles": "roles",
    "Devices": "devices",
    "Claims": "claims",
    "Jobs": "jobs",
    "Audit log": "audit",
    "Pulse": "pulse",
    "Account": "account",
}


class LiveServer:
    """The application on its own thread's loop, on a free loopback port."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    def start(self) -> LiveServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(60)
        return self

    async def _start(self) -> None:
        self._runner = web.AppRunner(create_app(self.site))
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    def stop(self) -> None:
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self.site.services.db.close()

    def run(self, coroutine: Any) -> Any:
        """Run a coroutine on the server's loop (to arrange through the services)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(60)

    def on_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call `fn` on the server's loop: the store's reads belong to that thread."""

        async def call() -> Any:
            return fn(*args)

        return self.run(call())

    # -- the interface, as another client sees it ------------------------------------------
    def call(self, method: str, path: str, token: str | None = None, **body: Any) -> Any:
        data = json.dumps(body).encode() if body else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        if data:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"{}")
        except HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read()!r}") from None

    def status(self, method: str, path: str, token: str | None = None) -> int:
        """Only the status of a call (for the refusals)."""
        request = urllib.request.Request(self.url + path, method=method)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return int(response.status)
        except HTTPError as error:
            return int(error.code)

    def token(self, who: str) -> str:
        """A token of one of PEOPLE, signed in over HTTP as any client."""
        org, login, password, staff = PEOPLE[who]
        return self.token_for(org, login, password, staff)

    def token_for(self, org: str, login: str, password: str, staff: bool = False) -> str:
        form = {"grant_type": "password", "username": login, "password": password}
        form["scope" if staff else "client_id"] = org
        data = urllib.parse.urlencode({k: v for k, v in form.items() if v}).encode()
        request = urllib.request.Request(self.url + "/v2/auth/token", data=data, method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            return str(json.loads(response.read())["access_token"])


Seed = Callable[[Site, World], None]


def serve_world(
    template: World, folder: Path, seed: Seed | None = None, **settings: Any
) -> LiveServer:
    """A copy of the world's data folder, with what `seed` adds, served."""
    shutil.copytree(template.folder, folder)
    site = new_site(folder, **settings)
    if seed is not None:
        seed(site, template)
    return LiveServer(site).start()


@dataclass
class Console:
    """A headless Chromium on the console of one server."""

    server: LiveServer
    driver: webdriver.Chrome
    profile: Path

    @classmethod
    def open(cls, server: LiveServer) -> Console:
        profile = Path(tempfile.mkdtemp(prefix="console-profile-"))
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(DRIVER), options=options)
        driver.execute_cdp_cmd(  # the page itself 1280x800, whatever the window around it
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
        )
        return cls(server, driver, profile)

    def close(self) -> None:
        self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- what a person does ------------------------------------------------------------------
    def start(self) -> None:
        """A fresh console: nothing is kept between loads (the token lives in memory)."""
        self.driver.get(self.server.url + "/console/")
        self.wait_page("sign-in")

    def sign_in(self, who: str) -> None:
        self.start()
        self.enter(*PEOPLE[who])

    def enter(self, org: str, login: str, password: str, staff: bool = False) -> None:
        """The sign-in form, filled in and sent."""
        self.type("#sign-in input[name=org]", org)
        if staff:
            self.find("#sign-in input[name=staff]").click()
        self.type("#sign-in input[name=username]", login)
        self.type("#sign-in input[name=password]", password)
        self.find("#sign-in button[type=submit]").click()

    def signed_in(self, who: str) -> None:
        self.sign_in(who)
        self.wait_page("overview")

    def visit(self, name: str, *args: str) -> WebElement:
        """Open a page as a link to it does (its hash), and wait until it is shown."""
        target = "#/" + "/".join([name, *args])
        if self.driver.execute_script("return location.hash") != target:
            self.after_page_shows(
                lambda: self.driver.execute_script(f"location.hash = {json.dumps(target)}")
            )
        return self.wait_page(name)

    def wait_page(self, name: str) -> WebElement:
        selector = f'main[data-page="{name}"][data-ready="1"]'
        WebDriverWait(self.driver, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, selector))
        return self.find("main")

    def wait_for(self, selector: str) -> WebElement:
        WebDriverWait(self.driver, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, selector))
        return self.find(selector)

    def after_page_shows(self, action: Callable[[], None]) -> None:
        """Do `action` (a form that changes what the page shows) and wait until the page
        was shown again with the server's answer."""
        before = self.find("main").get_attribute("data-shown")
        action()
        WebDriverWait(self.driver, WAIT).until(
            lambda d: (
                self.find("main").get_attribute("data-shown") != before
                and self.find("main").get_attribute("data-ready") == "1"
            )
        )

    def after_list_loads(self, action: Callable[[], None]) -> None:
        """Do `action` (a search, a page turn) and wait until the list showed its answer."""
        before = self.find("main section.list").get_attribute("data-loads")
        action()
        WebDriverWait(self.driver, WAIT).until(
            lambda d: self.find("main section.list").get_attribute("data-loads") != before
        )

    def find(self, selector: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def type(self, selector: str, text: str) -> None:
        element = self.find(selector)
        element.clear()
        element.send_keys(text)

    def nav(self) -> list[str]:
        return [a.text for a in self.all("#nav a")]

    def text(self) -> str:
        return str(self.find("main").text)

    # -- checks ------------------------------------------------------------------------------
    def violations(self) -> list[dict[str, Any]]:
        """axe-core's serious and critical violations on the page as it is now."""
        if not self.driver.execute_script("return typeof window.axe === 'object'"):
            self.driver.execute_script(AXE.read_text("utf-8"))
        found = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations));"
        )
        return [v for v in found if v["impact"] in ("serious", "critical")]

    def errors(self) -> list[str]:
        """What the browser logged as errors since the last call (a CSP refusal, a script
        that failed), except failed requests the console answers itself (a 4xx shown)."""
        logs = self.driver.get_log("browser")
        return [
            e["message"]
            for e in logs
            if e["level"] == "SEVERE" and "status of 4" not in e["message"]
        ]

    def navigation_ms(self) -> float:
        """The load of the current document, by Navigation Timing (its duration)."""
        entry = self.driver.execute_script(
            "return performance.getEntriesByType('navigation')[0].toJSON()"
        )
        return float(entry["duration"])

    def page_ms(self, name: str) -> float:
        """How long the last view of a page took to show, from the router's User Timing
        measure (route change to the page shown with its data)."""
        found = self.driver.execute_script(
            f"const m = performance.getEntriesByName('page:' + {json.dumps(name)});"
            "return m.length ? m[m.length - 1].duration : null"
        )
        assert found is not None, name
        return float(found)


def each_console(server: LiveServer) -> Iterator[Console]:
    console = Console.open(server)
    try:
        yield console
    finally:
        console.close()


def watch_tokens(console: Console, before: str = "") -> None:
    """Keep the bearer token of every request the page makes (`seen_token`): the console
    holds it in memory alone, so a test that must use or revoke it reads it off the wire.
    `before`: more script run on each request first (e.g. to fail one)."""
    console.driver.execute_script(
        "window.__seen = [];"
        "const original = window.fetch;"
        "window.fetch = (url, options) => {"
        " if (options && options.headers && options.headers.Authorization)"
        "  window.__seen.push(options.headers.Authorization);"
        f"{before}"
        " return original(url, options); };"
    )


def seen_token(console: Console) -> str:
    """The first token `watch_tokens` saw."""
    return str(console.driver.execute_script("return window.__seen[0]")).split()[1]
