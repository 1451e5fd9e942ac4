"""The console in `make test`: served from the package at /console/ with a strict CSP, and
each kind of caller signs in once and walks the main pages in a real browser, with no
serious or critical axe-core violation and no error in the browser's log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

import api
from tests.browser.console import PAGES, Console, LiveServer

SCRIPTS = Path(api.__file__).parent / "static" / "console" / "js"

# The pages each kind of caller is shown in the nav, in order.
NAV = {
    "staff": ["Overview", "Organizations", "Audit log", "Pulse", "Account"],
    "org_admin": [
        "Overview",
        "Organizations",
        "Users",
        "Groups",
        "Data",
        "Files",
        "Roles",
        "Devices",
        "Claims",
        "Jobs",
        "Audit log",
        "Pulse",
        "Account",
    ],
    "project_admin": [
        "Overview",
        "Users",
        "Groups",
        "Data",
        "Files",
        "Roles",
        "Devices",
        "Claims",
        "Jobs",
        "Account",
    ],
    "group_admin": [
        "Overview",
        "Users",
        "Groups",
        "Data",
        "Files",
        "Roles",
        "Devices",
        "Jobs",
        "Account",
    ],
    "member": ["Overview", "Users", "Account"],
}


@pytest.mark.parametrize("who", list(NAV))
def test_each_caller_signs_in_and_walks_the_pages(console: Console, who: str) -> None:
    console.signed_in(who)
    assert console.nav() == NAV[who]
    for title in NAV[who]:
        main = console.visit(PAGES[title])
        assert main.find_element("css selector", "h1").text
        assert console.violations() == [], (who, title)
    assert console.errors() == []


def test_sizes_are_written_by_one_module(console: Console, live: LiveServer) -> None:
    """`bytes()` lives in js/format.js alone, which the pages load: the Overview's file
    bytes read as its answer for the server's count (the Files pages import it too)."""
    defining = sorted(
        str(path.relative_to(SCRIPTS))
        for path in SCRIPTS.rglob("*.js")
        if "function bytes(" in path.read_text("utf-8")
    )
    assert defining == ["format.js"]
    console.signed_in("org_admin")
    loaded = console.driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)"
    )
    assert "/console/js/format.js" in loaded  # imported by the pages, not only by this test
    sizes = [0, 1023, 1536, 5 * 1024**3, 3 * 1024**5]
    written = console.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/console/js/format.js').then((m) => done(arguments[0].map(m.bytes)));",
        sizes,
    )
    assert written == ["0 B", "1023 B", "1.5 KiB", "5.0 GiB", "3072.0 TiB"]
    count = live.call("GET", "/v2/summary", live.token("org_admin"))["summary"]["file_bytes"]
    shown = console.find("[data-count=file_bytes] .figure").text
    assert shown == console.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/console/js/format.js').then((m) => done(m.bytes(arguments[0])));",
        count,
    )


def format_js(console: Console, call: str, *args: object) -> Any:
    """`call` (an expression over `m`, format.js, and `args`) as the browser answers it."""
    return console.driver.execute_async_script(
        "const done = arguments[arguments.length - 1], args = arguments[0];"
        f"import('/console/js/format.js').then((m) => done({call}));",
        list(args),
    )


def test_times_and_typed_json_are_written_by_one_module(console: Console, live: LiveServer) -> None:
    """`when()` and `parseJson()` were written twice each, and the two `when`s differed (no
    time was "" on the Claims, Jobs and Audit pages, "never" on the device pages): now both
    live in js/format.js alone. No time reads "never" (a device not yet seen), a time the
    same way everywhere; JSON that does not parse names its box."""
    defining = {
        name: sorted(
            str(path.relative_to(SCRIPTS))
            for path in SCRIPTS.rglob("*.js")
            if f"function {name}(" in path.read_text("utf-8")
        )
        for name in ("when", "parseJson")
    }
    assert defining == {"when": ["format.js"], "parseJson": ["format.js"]}
    assert format_js(console, "args.map(m.when)", None, "", "2026-11-27T20:01:02.123456Z") == [
        "never",
        "never",
        "2026-11-27 20:01:02 UTC",
    ]
    parsed = (
        "args.map((t) => { try { return m.parseJson(t, 'Template'); }"
        " catch (e) { return e.message; } })"
    )
    good, bad = format_js(console, parsed, '{"a": [1]}', "{")
    assert good == {"a": [1]} and bad.startswith("Template is not JSON: ")
    optional = "args.map((t) => m.optionalJson(t, 'Document') ?? 'unset')"
    assert format_js(console, optional, "", "  ", "2") == ["unset", "unset", 2]
    console.signed_in("org_admin")
    devices = live.call("GET", "/v2/devices?limit=100", live.token("org_admin"))["devices"]
    console.visit("devices")
    shown = {
        row.find_element("css selector", "td:first-child").text: row.find_element(
            "css selector", "td:nth-child(3)"
        ).text
        for row in console.all("main section.list tbody tr")
    }
    expected = format_js(console, "args.map((d) => [d.name, m.when(d.last_seen)])", *devices)
    assert shown and shown == dict(expected)
    assert "never" in shown.values()
    assert console.errors() == []


def test_the_console_is_served_with_a_strict_policy(live: LiveServer) -> None:
    import urllib.request

    with urllib.request.urlopen(live.url + "/console/") as response:
        policy = response.headers["Content-Security-Policy"]
        page = response.read().decode()
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "<script>" not in page and 'content="15.0"' in page


def test_every_control_is_reached_by_keyboard_with_a_visible_focus(console: Console) -> None:
    """Tab goes through every link, button and input of a page in order, and each one
    shows the focus ring while it has the focus."""
    console.signed_in("org_admin")
    console.visit("users")
    controls = console.driver.execute_script(
        "return [...document.querySelectorAll('a[href], button, input, select, summary')]"
        ".filter(e => !e.disabled && e.checkVisibility())"
    )
    console.driver.execute_script("document.activeElement.blur(); window.focus()")
    reached, rings = [], []
    for _ in range(len(controls) + 5):
        console.driver.switch_to.active_element.send_keys(Keys.TAB)
        focused = console.driver.switch_to.active_element
        reached.append(focused)
        rings.append(
            console.driver.execute_script(
                "const s = getComputedStyle(arguments[0]);"
                "return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2",
                focused,
            )
        )
    missing = [c for c in controls if c not in reached]
    assert missing == [], [m.get_attribute("outerHTML")[:80] for m in missing]
    assert all(ring for element, ring in zip(reached, rings, strict=True) if element in controls)


def test_the_accessibility_check_finds_what_it_looks_for(console: Console) -> None:
    """axe-core runs for real: an input without a label and grey-on-white text, added to
    the page here, are reported as violations (so the empty lists above mean something)."""
    console.start()
    console.driver.execute_script(
        "const i = document.createElement('input'); document.querySelector('main').append(i);"
        "const p = document.createElement('p'); p.textContent = 'faint';"
        "p.style.color = '#ccc'; document.querySelector('main').append(p);"
    )
    found = {v["id"] for v in console.violations()}
    assert {"label", "color-contrast"} <= found
