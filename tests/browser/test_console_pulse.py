"""The Pulse page (#35, part "pulse") in a real browser, on a site with an hour of samples
(tests/browser/world_pulse.py): staff and an org admin see a chart per series, drawn by the
vendored uPlot under the strict CSP, and the same figures as a table; a plain user has no
Pulse in the nav. `make test` runs the smoke; the full matrix is `@pytest.mark.long`."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from edge.kernel import clock
from tests.browser.console import WAIT, Console, LiveServer
from tests.browser.world_pulse import seed

__all__ = ["seed"]  # the module's `seed` (tests/browser/conftest.py): an hour of samples
SERIES = ["requests", "mqtt", "failures", "online", "disk"]
CHARTS = {"staff": SERIES, "org_admin": SERIES[:-1]}  # disk free is staff's alone
CALLERS = (
    "staff",
    "staff_in_clinic",
    "org_admin",
    "project_admin",
    "group_admin",
    "member",
    "plain",
)


def charts(console: Console) -> list[str]:
    """The series of the charts shown, each drawn (uPlot's canvas in its figure)."""
    figures = console.all("main .charts figure")
    assert all(f.find_elements("css selector", ".plot canvas") for f in figures)
    return [str(f.get_attribute("data-series")) for f in figures]


def table_column(console: Console, column: int) -> list[str]:
    """One column of the table of figures (0: the minute), the newest row first."""
    if console.find("#pulse-table").get_attribute("open") is None:
        console.find("#pulse-table summary").click()
    rows = console.all("#pulse-table tbody tr")
    return [r.find_elements("css selector", "td")[column].text for r in rows]


def shown_by_api(live: LiveServer, who: str, query: str = "") -> list[dict[str, float]]:
    samples = live.call("GET", f"/v2/pulse{query}", live.token(who))["pulse"]["samples"]
    return list(reversed(samples))  # the newest first, as the table


@pytest.mark.parametrize("who", list(CHARTS))
def test_staff_and_an_org_admin_see_the_charts(console: Console, who: str) -> None:
    console.signed_in(who)
    assert "Pulse" in console.nav()
    console.visit("pulse")
    assert charts(console) == CHARTS[who]
    held = int(console.find("main .charts").get_attribute("data-samples") or 0)
    assert held >= 50  # the seeded hour, less the five minutes the server was down
    assert len(table_column(console, 0)) == held
    assert any("(after a gap)" in minute for minute in table_column(console, 0))
    assert console.violations() == []
    assert console.errors() == []  # no CSP refusal: uPlot's styles are CSSOM, its CSS a file


def test_the_browser_log_shows_a_csp_refusal(console: Console) -> None:
    """So that the empty logs above mean something: an inline style, which the policy
    forbids (uPlot sets none), is refused and logged."""
    console.signed_in("staff")
    console.visit("pulse")
    console.errors()  # what came before
    console.driver.execute_script(
        "document.querySelector('main').insertAdjacentHTML('beforeend', "
        "'<p style=\"color: red\">inline</p>')"
    )
    assert any("Content Security Policy" in e for e in console.errors())


def test_a_plain_user_has_no_pulse(console: Console) -> None:
    console.signed_in("plain")
    assert "Pulse" not in console.nav()
    console.after_page_shows(lambda: console.driver.execute_script("location.hash = '#/pulse'"))
    assert console.find("main").get_attribute("data-page") == "overview"  # shown instead


# -- the full matrix (make test-long) ---------------------------------------------------------
@pytest.mark.long
@pytest.mark.parametrize("who", CALLERS)
def test_the_pulse_page_as_every_caller(console: Console, live: LiveServer, who: str) -> None:
    console.signed_in(who)
    sees = who in ("staff", "staff_in_clinic", "org_admin")
    assert ("Pulse" in console.nav()) is sees
    if not sees:
        assert live.status("GET", "/v2/pulse", live.token(who)) == 403  # the server agrees
        return
    console.visit("pulse")
    assert charts(console) == (SERIES if who.startswith("staff") else SERIES[:-1])
    assert console.violations() == [], who
    assert console.errors() == []


@pytest.mark.long
@pytest.mark.parametrize(("who", "query"), [("staff", ""), ("org_admin", "")])
def test_the_chart_and_the_table_show_the_samples(
    console: Console, live: LiveServer, who: str, query: str
) -> None:
    console.signed_in(who)
    console.visit("pulse")
    shown = table_column(console, 1)  # requests per second, the newest first
    served = [f"{s['requests_per_second']:.2f}" for s in shown_by_api(live, who, query)]
    common = [value for value in shown if value in served]
    assert len(common) >= 50  # the seeded hour (a sample may have come or gone meanwhile)
    assert common == [value for value in served if value in common]  # in the same order
    held = int(console.find("main .charts").get_attribute("data-samples") or 0)
    assert held == len(shown)
    axes = console.driver.execute_script(  # uPlot draws them on its canvas
        "return [...document.querySelectorAll('main figure')]"
        ".map(f => f.plot.axes.map(a => a.label))"
    )
    assert axes[0] == ["Time", "requests/s"] and all(len(a) == 2 and all(a) for a in axes)
    assert console.violations() == []


@pytest.mark.long
def test_staff_choose_one_org_and_see_its_counts(console: Console, live: LiveServer) -> None:
    console.signed_in("staff")
    console.visit("pulse")
    choice = console.find("#pulse-org")
    clinic = next(o for o in choice.find_elements("css selector", "option") if o.text == "Clinic")
    org_id = str(clinic.get_attribute("value"))
    console.after_page_shows(clinic.click)
    assert console.driver.execute_script("return location.hash") == f"#/pulse/{org_id}"
    assert "this organization's counts" in console.find("#pulse-scope").text
    shown = table_column(console, 1)
    served = [
        f"{s['requests_per_second']:.2f}" for s in shown_by_api(live, "staff", f"?org_id={org_id}")
    ]
    assert len([v for v in shown if v in served]) >= 50
    assert charts(console) == SERIES  # staff see the disk for an org too


@pytest.mark.long
def test_an_unknown_org_asked_by_url_shows_the_servers_answer(console: Console) -> None:
    console.signed_in("staff")
    console.visit("pulse", "no-such-org")
    assert console.find("main p.error").text == "Organization not found"


@pytest.mark.long
def test_the_page_is_used_by_keyboard(console: Console) -> None:
    console.signed_in("staff")
    console.visit("pulse")
    console.find("#pulse-table summary").send_keys(Keys.ENTER)
    assert console.find("#pulse-table").get_attribute("open") is not None
    assert console.find("label[for=pulse-org]").text == "Organization"


@pytest.mark.long
def test_the_page_reads_the_pulse_again_each_minute(console: Console, live: LiveServer) -> None:
    """A sample written after the page was shown appears once the page's minute is up
    (the browser's virtual time moved a minute on, so no test waits a real one)."""
    console.signed_in("staff")
    console.visit("pulse")
    charts = console.find("main .charts")
    newest, shown = (
        charts.get_attribute("data-newest"),
        console.find("main").get_attribute("data-shown"),
    )
    added = live.run(live.site.services.pulse_sampler.flush())  # one more sample, ending now
    console.driver.execute_cdp_cmd(
        "Emulation.setVirtualTimePolicy", {"policy": "advance", "budget": 61_000}
    )
    WebDriverWait(console.driver, WAIT).until(
        lambda _: charts.get_attribute("data-newest") != newest
    )
    ended = clock.iso(datetime.fromtimestamp(added[0].ended / 1000, UTC))
    # the sample written meanwhile (or a later one of the server's own minute)
    assert str(charts.get_attribute("data-newest")) >= ended
    assert console.find("main").get_attribute("data-shown") == shown  # redrawn in place
