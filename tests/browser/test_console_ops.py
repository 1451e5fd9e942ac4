"""The console's Claims, Jobs and Audit log pages (#35, part "ops") in a real browser.

Smoke (in `make test`): each kind of caller signs in once and is shown exactly the pages of
these three it may use, each with its main content. Long (`make test-long`): a claim made
with its secret and QR code shown once, then revoked; a job made through the console to a
paho-mqtt device that answers, its progress followed live, the job canceled and deleted;
the audit log's filters and its CSV export checked against the API; and the refusals (a
plain user, another organization's job by URL)."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.console import PAGES, WAIT, Console, LiveServer
from tests.browser.ops import (
    PahoDevice,
    after_list_renews,
    downloaded,
    downloads_into,
    make_claim,
    open_form,
    tab_walk,
)
from tests.browser.world_ops import (
    MANY_EVENTS,
    Ops,
    build_ops,
    many_events,
    new_device,
    upload,
)
from tests.ports import free_port
from tests.world import World

SERVER_SETTINGS = {"mqtt_port": free_port()}
seed = many_events  # the log holds 10,000 more events than the world made
OPS_PAGES = {title: PAGES[title] for title in ("Claims", "Jobs", "Audit log")}
# Which of the three pages each kind of caller is shown, in the nav's order.
SEES = {
    "staff": ["Audit log"],
    "staff_in_clinic": ["Claims", "Jobs", "Audit log"],
    "org_admin": ["Claims", "Jobs", "Audit log"],
    "project_admin": ["Claims", "Jobs"],
    "group_admin": ["Jobs"],
    "member": [],
    "plain": [],
}
MAIN = {  # what each page shows first, by a selector of its main content
    "claims": "#create-claim",
    "jobs": "main table",
    "audit": "#audit-filters",
}


@pytest.fixture(scope="module")
def ops(live: LiveServer, world_template: World) -> Ops:
    return build_ops(live, world_template)


@pytest.mark.parametrize("who", list(SEES))
def test_each_caller_sees_the_ops_pages_they_may_use(console: Console, ops: Ops, who: str) -> None:
    console.signed_in(who)
    shown = [title for title in console.nav() if title in OPS_PAGES]
    assert shown == SEES[who]
    for title in shown:
        main = console.visit(OPS_PAGES[title])
        assert console.find("main h1").text == title
        assert console.all(MAIN[OPS_PAGES[title]]), (who, title)
        assert not console.all("main p.error:not(:empty)"), (who, title, console.text())
        if title == "Audit log":  # one page of the log, read on the server
            assert len(console.all("main section.list tbody tr")) == 25
            count = main.find_element("css selector", ".pager .muted").text
            assert int(count.split()[0]) > MANY_EVENTS
        if title == "Jobs" and who != "group_admin":  # the world's job, with its progress
            assert "Pump firmware 2.0" in main.text
            assert console.all("main .job-progress .seg")
    assert console.errors() == []


def rows_shown(console: Console) -> list[str]:
    """The first column of the page's list, each row's."""
    return [td.text for td in console.all("main section.list tbody tr td:first-child")]


@pytest.mark.parametrize(
    ("page", "route", "text", "words"),
    [
        ("jobs", "/v2/jobs", "description", "pump"),
        ("claims", "/v2/provisioning/claims", "name", "spare"),
    ],
)
def test_jobs_and_claims_are_searched_on_the_server(
    console: Console, live: LiveServer, ops: Ops, page: str, route: str, text: str, words: str
) -> None:
    """The Jobs and Claims lists have the search box of the other searchable lists, and
    what it finds is the server's `?search=` answer (jobs by description, claims by name);
    a word nothing holds finds nothing."""
    console.signed_in("org_admin")
    console.visit(page)
    query = {"search": words, "limit": "25"}
    if page == "jobs":
        query |= {"desc": "true", "order_by": "created_date"}
    answer = live.call("GET", f"{route}?{urllib.parse.urlencode(query)}", live.token("org_admin"))
    found = [item[text] for item in answer[page]]
    assert found
    for typed, shown in ((words, found), ("zebra", [])):
        console.type(f"#{page}-search", typed)
        console.after_list_loads(
            lambda: console.find("main form[role=search] button[type=submit]").click()
        )
        assert rows_shown(console) == shown, typed
        assert f"{len(shown)} in all" in console.find("main .pager").text


# -- the full matrix (make test-long) ---------------------------------------------------------
@pytest.mark.long
def test_each_list_shows_a_search_box_exactly_where_its_route_takes_search(
    console: Console, live: LiveServer, ops: Ops, world_template: World
) -> None:
    """Every list of the console, on every page that has one, against the OpenAPI
    document: a route that takes `search` gets a box, one that refuses it (a 400) none."""
    takes = searchable_routes(live)
    pump, ward = ops.devices["pump-1"]["id"], world_template.org_group_id
    pages = [("orgs",), ("users",), ("groups",), ("groups", ward), ("data",), ("roles",),
             ("devices",), ("devices", pump), ("claims",), ("jobs",), ("jobs", ops.job),
             ("audit",)]  # fmt: skip
    console.signed_in("staff_in_clinic")  # staff in Clinic: every page, the orgs' list too
    seen: dict[str, bool] = {}
    for page in pages:
        console.visit(*page)
        for section in console.all("main section.list"):
            route = route_of(takes, str(section.get_attribute("data-path")))
            boxes = section.find_elements("css selector", "input[type=search]")
            seen[route] = bool(boxes)
            assert bool(boxes) == takes[route], (page, route)
    assert set(seen) == set(LISTS), seen


# Every route the console lists (list.js's listView): the sweep above must meet them all.
LISTS = (
    "/v2/orgs", "/v2/projects", "/v2/users", "/v2/groups", "/v2/roles", "/v2/devices",
    "/v2/devices/{device_id}/commands", "/v2/devices/{device_id}/executions",
    "/v2/provisioning/claims", "/v2/jobs", "/v2/jobs/{job_id}/executions", "/v2/audit",
)  # fmt: skip


def searchable_routes(live: LiveServer) -> dict[str, bool]:
    """Each GET route of the OpenAPI document: whether it takes `search`."""
    paths = live.call("GET", "/v2/openapi.json")["paths"]
    return {
        path: any(p.get("name") == "search" for p in methods["get"].get("parameters", []))
        for path, methods in paths.items()
        if "get" in methods
    }


def route_of(routes: dict[str, bool], path: str) -> str:
    """The route template a request path is one of (the most literal when several are)."""
    matching = [r for r in routes if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", r), path)]
    assert matching, path
    return min(matching, key=lambda r: r.count("{"))


@pytest.mark.long
@pytest.mark.parametrize("who", list(SEES))
def test_each_ops_page_passes_axe_and_hides_what_the_caller_may_not_do(
    console: Console, live: LiveServer, ops: Ops, who: str
) -> None:
    console.signed_in(who)
    for title in SEES[who]:
        console.visit(OPS_PAGES[title])
        assert console.violations() == [], (who, title)
    if "Jobs" in SEES[who]:
        console.visit("jobs", ops.job)
        readable = live.status("GET", f"/v2/jobs/{ops.job}", live.token(who)) == 200
        assert bool(console.all("#job-page")) == readable, (who, console.text())
        assert bool(console.all("#cancel-job")) == readable  # who reads a job may end it
        if readable:
            assert console.violations() == [], (who, "job")
        else:
            assert console.find("main p.error").text  # the server's 404, shown
    hidden = set(OPS_PAGES.values()) - {OPS_PAGES[t] for t in SEES[who]}
    for name in sorted(hidden):  # forced by URL: another page is shown instead
        console.after_page_shows(
            lambda: console.driver.execute_script(f"location.hash = '#/{name}'")  # noqa: B023
        )
        assert console.find("main").get_attribute("data-page") != name


@pytest.mark.long
def test_a_claim_shows_its_secret_and_qr_once_and_is_revoked(
    console: Console, live: LiveServer, ops: Ops
) -> None:
    console.signed_in("org_admin")
    make_claim(console, "Ward sensors", "3", '{"tags": ["ward"]}')
    secret = console.find("#claim-secret").text
    claim_id = console.find("#claim-id").text
    qr = console.find("#claim-qr")
    assert secret.startswith("ecs_") and str(qr.get_attribute("src")).startswith("data:image/png")
    assert console.driver.execute_script("return arguments[0].naturalWidth", qr) > 0
    assert console.violations() == []
    token = live.token("org_admin")
    stored = live.call("GET", f"/v2/provisioning/claims/{claim_id}", token)["claim"]
    assert stored["max_uses"] == 3 and stored["template"]["tags"] == ["ward"]
    assert "secret" not in stored
    console.visit("overview")
    console.visit("claims")  # the secret is not shown again
    assert secret not in console.text() and not console.all("#claim-secret")
    after_list_renews(console, lambda: console.find(f"button[data-claim='{claim_id}']").click())
    assert live.call("GET", f"/v2/provisioning/claims/{claim_id}", token)["claim"]["state"] == (
        "revoked"
    )
    assert not console.all(f"button[data-claim='{claim_id}']")


@pytest.mark.long
def test_every_control_of_the_ops_pages_is_reached_by_keyboard(console: Console, ops: Ops) -> None:
    console.signed_in("org_admin")
    for page in (("claims",), ("jobs",), ("jobs", ops.job), ("audit",)):
        console.visit(*page)
        for form_id in ("create-claim", "create-job"):
            if console.all(f"#{form_id}"):
                open_form(console, form_id)
        missing, unringed = tab_walk(console)
        assert missing == [], page
        assert unringed == [], page


@pytest.mark.long
def test_a_project_admin_makes_a_claim_of_their_project(
    console: Console, live: LiveServer, world_template: World
) -> None:
    console.signed_in("project_admin")
    console.visit("claims")
    options = [o.get_attribute("value") for o in console.all("#create-claim select option")]
    assert options == [world_template.project_id]  # Apollo alone; no org-level claim
    make_claim(console, "Apollo pumps", "2")
    claim_id = console.find("#claim-id").text
    token = live.token("project_admin")
    stored = live.call("GET", f"/v2/provisioning/claims/{claim_id}", token)["claim"]
    assert stored["project_id"] == world_template.project_id and stored["max_uses"] == 2


@pytest.mark.long
def test_a_claim_the_server_refuses_shows_its_message(console: Console) -> None:
    console.signed_in("org_admin")
    console.visit("claims")
    open_form(console, "create-claim")
    console.type("#create-claim input[name=claim_name]", "Too many")
    console.type("#create-claim input[name=max_uses]", "100001")
    console.driver.execute_script(
        "document.querySelector('#create-claim input[name=max_uses]').removeAttribute('max')"
    )
    console.find("#create-claim button[type=submit]").click()
    message = console.wait_for("#create-claim p.error:not(:empty)").text
    assert "max_uses" in message and not console.all("#claim-secret")


@pytest.fixture
def device(live: LiveServer) -> Iterator[PahoDevice]:
    made = new_device(live, live.token("org_admin"), "console-pump")
    paho = PahoDevice(int(SERVER_SETTINGS["mqtt_port"]), made)
    yield paho
    paho.finish.set()
    paho.stop()


def make_job(console: Console, **values: str) -> str:
    """The console's create form, filled in and sent; the new job's ID (its page shown)."""
    console.visit("jobs")
    open_form(console, "create-job")
    for name, value in values.items():
        selector = "#job-document" if name == "document" else f"#create-job [name={name}]"
        if name == "target_kind":
            console.driver.execute_script(
                "arguments[0].value = arguments[1]", console.find(selector), value
            )
        else:
            console.type(selector, value)
    console.after_page_shows(lambda: console.find("#create-job button[type=submit]").click())
    assert console.all("#job-page"), console.text()
    return str(console.find("#job-page").get_attribute("data-job"))


@pytest.mark.long
def test_a_job_made_in_the_console_shows_the_devices_progress_live(
    console: Console, live: LiveServer, device: PahoDevice
) -> None:
    console.signed_in("org_admin")
    job_id = make_job(
        console,
        description="Sensor firmware",
        target_kind="device_ids",
        target=device.id,
        document='{"version": "3.1"}',
        max_retries="1",
    )
    shown = console.find("main").get_attribute("data-shown")
    wait = WebDriverWait(console.driver, WAIT)
    wait.until(lambda _: console.find("#job-page").get_attribute("data-live") == "open")
    assert device.executions.get(timeout=WAIT)["document"]["version"] == "3.1"
    wait.until(lambda _: "IN_PROGRESS 1" in console.find("#job-progress").text)
    device.finish.set()
    wait.until(lambda _: console.find("#job-state").text == "COMPLETED")
    assert "SUCCEEDED 1" in console.find("#job-progress").text
    wait.until(lambda _: "installed" in console.find("main section.list").text)
    assert console.find("main").get_attribute("data-shown") == shown  # live, not reloaded
    job = live.call("GET", f"/v2/jobs/{job_id}", live.token("org_admin"))["job"]
    assert job["state"] == "COMPLETED" and job["counts"]["SUCCEEDED"] == 1
    assert job["policy"]["max_retries"] == 1 and job["description"] == "Sensor firmware"
    assert console.errors() == []


@pytest.mark.long
def test_a_job_page_left_closes_its_stream(console: Console, live: LiveServer, ops: Ops) -> None:
    """An account holds at most events_max_streams (5) streams: a job's page opened and
    left more times than that still follows the job live, so none is left open."""
    console.signed_in("org_admin")
    wait = WebDriverWait(console.driver, WAIT)
    for _ in range(7):
        console.visit("jobs", ops.job)
        page = console.find("#job-page")
        # the sixth and seventh too: the streams of the earlier visits were closed
        assert wait.until(lambda _, page=page: page.get_attribute("data-live") == "open")
        console.visit("jobs")


@pytest.mark.long
def test_a_job_with_a_firmware_artifact_pins_the_file(
    console: Console, live: LiveServer, ops: Ops, world_template: World
) -> None:
    firmware = b"firmware 3.2 " * 1000
    ward = world_template.org_group_id
    upload(live, live.token("org_admin"), ward, "fw/sensor-3.2.bin", firmware)
    console.signed_in("org_admin")
    job_id = make_job(
        console,
        target_kind="tags",
        target="pump",
        document='{"version": "3.2"}',
        artifact_group=ward,
        artifact_path="/fw/sensor-3.2.bin",
        max_per_minute="10",
    )
    shown = console.find("#job-page").text
    assert hashlib.sha256(firmware).hexdigest() in shown and str(len(firmware)) in shown
    job = live.call("GET", f"/v2/jobs/{job_id}", live.token("org_admin"))["job"]
    assert job["targets"] == {"tags": ["pump"]} and job["policy"]["max_per_minute"] == 10
    assert job["artifact"]["sha256"] == hashlib.sha256(firmware).hexdigest()
    assert sum(job["counts"].values()) == len(ops.devices)


@pytest.mark.long
def test_a_group_admin_makes_a_job_for_a_member_of_their_group(
    console: Console, live: LiveServer, world_template: World
) -> None:
    member = world_template.devices["device_member"]  # a member of Ward, their group
    console.signed_in("group_admin")
    job_id = make_job(console, description="Ward update", target=member, document="{}")
    assert console.find("#job-state").text in ("SCHEDULED", "IN_PROGRESS")
    assert console.all("#cancel-job")  # its maker may end it
    job = live.call("GET", f"/v2/jobs/{job_id}", live.token("group_admin"))["job"]
    assert job["targets"] == {"device_ids": [member]} and job["description"] == "Ward update"
    console.visit("jobs")
    assert "Ward update" in console.text()  # listed: the jobs they made


@pytest.mark.long
def test_a_job_is_canceled_with_force_and_deleted(
    console: Console, live: LiveServer, ops: Ops
) -> None:
    token = live.token("org_admin")
    ids = [d["id"] for d in ops.devices.values()]
    job_id = live.call("POST", "/v2/jobs", token, document={}, targets={"device_ids": ids})["job"][
        "id"
    ]
    console.signed_in("org_admin")
    console.visit("jobs", job_id)
    console.find("#job-page input[name=force]").click()
    console.after_page_shows(lambda: console.find("#cancel-job").click())
    assert console.find("#job-state").text == "CANCELED"
    assert live.call("GET", f"/v2/jobs/{job_id}", token)["job"]["state"] == "CANCELED"
    console.after_page_shows(lambda: console.find("#delete-job").click())
    assert console.find("main").get_attribute("data-page") == "jobs" and not console.all(
        "#job-page"
    )
    assert live.status("GET", f"/v2/jobs/{job_id}", token) == 404


@pytest.mark.long
def test_the_servers_refusal_of_a_job_is_shown(console: Console, ops: Ops) -> None:
    console.signed_in("org_admin")
    console.visit("jobs")
    open_form(console, "create-job")
    console.type("#create-job [name=target]", "nosuchdevice0000")
    console.type("#job-document", '{"a": 1}')
    console.type("#create-job [name=abort_percent]", "1000")
    console.find("#create-job button[type=submit]").click()
    message = console.wait_for("#create-job p.error:not(:empty)").text
    assert message.startswith("policy.abort_percent"), message
    assert console.find("main").get_attribute("data-page") == "jobs" and not console.all(
        "#job-page"
    )


@pytest.mark.long
def test_another_orgs_job_by_url_is_a_message_not_a_page(
    console: Console, live: LiveServer
) -> None:
    theirs = other_org_job(live)
    console.signed_in("org_admin")
    console.visit("jobs", theirs)
    assert not console.all("#job-page") and console.find("main p.error").text


def other_org_job(live: LiveServer) -> str:
    """A job of Other, made by its admin (the admin of tests/tenants.py's second org)."""
    from tests.tenants import PASSWORD

    token = live.token_for("other", "admin@other.test", PASSWORD)
    pump = new_device(live, token, "their-pump")
    job = live.call("POST", "/v2/jobs", token, document={}, targets={"device_ids": [pump["id"]]})
    return str(job["job"]["id"])


def audit_listed(live: LiveServer, token: str, **query: str) -> list[dict[str, Any]]:
    """Every event GET /v2/audit gives for the query, oldest first, page by page."""
    import json
    import urllib.parse

    events: list[dict[str, Any]] = []
    after = ""
    while True:
        params = {**query, "limit": "1000", **({"last_evaluated_key": after} if after else {})}
        reply = live.call("GET", "/v2/audit?" + urllib.parse.urlencode(params), token)
        events += reply["audit_events"]
        if not reply.get("last_evaluated_key"):
            return events
        after = json.dumps(reply["last_evaluated_key"])


@pytest.mark.long
def test_the_audit_log_filters_and_exports_every_matching_event_as_csv(
    console: Console, live: LiveServer, ops: Ops, tmp_path: Path
) -> None:
    token = live.token("org_admin")
    for n in range(30):  # a name a spreadsheet would run, and more events than a page
        new_device(live, token, f'=HYPERLINK("x","{n}"), "quoted"')
    console.signed_in("org_admin")
    console.visit("audit")
    console.type("#audit-action", "device_created")
    after_list_renews(console, lambda: console.find("#audit-filters button[type=submit]").click())
    rows = console.all("main section.list tbody tr")
    assert len(rows) == 25 and all("device_created" in r.text for r in rows)
    expected = audit_listed(live, token, action="device_created")
    newest = expected[-1]  # the first row: the names beside the IDs
    cells = [c.text for c in rows[0].find_elements("css selector", "td")]
    assert cells[2].split() == [newest["actor_name"], "user", newest["actor_id"]]
    assert newest["target_name"] in cells[3] and cells[3].endswith(newest["target_id"])
    downloads_into(console, tmp_path)
    console.find("#export-csv").click()
    saved = downloaded(console, tmp_path)
    assert saved.name.startswith("audit_start_to_") and saved.suffix == ".csv"
    text = saved.read_bytes().decode("utf-8")
    assert text.startswith("\ufeff") and "\r\n" in text
    table = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))
    assert [r["id"] for r in table] == [e["id"] for e in expected] and len(table) >= 32
    formulas = [r for r in table if "HYPERLINK" in r["target_name"]]
    assert len(formulas) == 30
    assert all(r["target_name"].startswith("'=HYPERLINK") for r in formulas)
    assert all('"quoted"' in r["target_name"] for r in formulas)
    assert {r["actor_name"] for r in table} == {e.get("actor_name", "") for e in expected}


@pytest.mark.long
def test_the_audit_log_filters_by_time_range_and_names_the_file_by_it(
    console: Console, live: LiveServer, ops: Ops, tmp_path: Path
) -> None:
    token = live.token("org_admin")
    today = live.call("GET", "/v2/audit?limit=1&desc=true", token)["audit_events"][0][
        "created_date"
    ][:10]
    console.signed_in("org_admin")
    console.visit("audit")
    for name, day in (("from", today), ("to", today)):
        console.driver.execute_script(
            "arguments[0].value = arguments[1]", console.find(f"#audit-{name}"), day
        )
    console.type("#audit-target", "pump-")
    after_list_renews(console, lambda: console.find("#audit-filters button[type=submit]").click())
    shown = console.all("main section.list tbody tr")
    expected = audit_listed(
        live, token, target_name_sw="pump-", created_date_gte=today, created_date_lte=today
    )
    assert len(shown) == len(expected) > 0
    downloads_into(console, tmp_path)
    console.find("#export-csv").click()
    saved = downloaded(console, tmp_path)
    assert saved.name == f"audit_{today}_to_{today}.csv"
    table = list(csv.DictReader(io.StringIO(saved.read_text("utf-8-sig"))))
    assert [r["id"] for r in table] == [e["id"] for e in expected]


@pytest.mark.long
def test_staff_read_every_orgs_events_and_filter_by_organization(
    console: Console, live: LiveServer, ops: Ops, world_template: World
) -> None:
    clinic = world_template.tenant.org_id
    console.signed_in("staff")
    console.visit("audit")
    assert "Organization" in [th.text for th in console.all("main thead th")]
    console.type("#audit-org", clinic)
    console.type("#audit-action", "claim_revoked")
    after_list_renews(console, lambda: console.find("#audit-filters button[type=submit]").click())
    rows = console.all("main section.list tbody tr")
    expected = audit_listed(live, live.token("staff"), org_id=clinic, action="claim_revoked")
    assert len(rows) == len(expected) > 0 and all(clinic in r.text for r in rows)
    console.signed_in("org_admin")  # in an organization, no such filter or column
    console.visit("audit")
    assert not console.all("#audit-org") and "Organization" not in console.text()
