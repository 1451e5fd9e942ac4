"""The console's full matrix (`make test-long`): every page as every caller on a site of
10,000 more users, what each may not see not shown, changes made through the console
checked through the API, and each page's first view under a second."""

from __future__ import annotations

import time
from typing import Any

import pyotp
import pytest

from edge.app import Site
from storage import outbox
from tests.browser.console import PAGES, PEOPLE, Console, LiveServer
from tests.rows import Rows
from tests.tenants import PASSWORD
from tests.world import USER_CREATORS_IN_APOLLO, World

pytestmark = pytest.mark.long
MANY = 10_000
DETAILS = {"users": "users", "groups": "groups", "roles": "roles"}  # lists whose rows open a page
FIRST_VIEW_MS = 1000


def seed(site: Site, world: World) -> None:
    """10,000 more users in Clinic, straight to storage."""
    Rows(site, world.tenant.org_id).users(MANY)


def listed(live: LiveServer, token: str, path: str, key: str, **query: str) -> list[dict[str, Any]]:
    params = "&".join(f"{k}={v}" for k, v in {"limit": "25", **query}.items())
    return live.call("GET", f"{path}?{params}", token)[key]  # type: ignore[no-any-return]


@pytest.mark.parametrize("who", list(PEOPLE))
def test_every_page_as_every_caller(console: Console, live: LiveServer, who: str) -> None:
    console.signed_in(who)
    for title in console.nav():
        name = PAGES[title]
        console.visit(name)
        assert console.violations() == [], (who, name)
        links = [a.get_attribute("href") for a in console.all("main td a")]
        if name in DETAILS and links:  # the first row's own page
            console.after_page_shows(lambda: console.driver.get(links[0]))  # noqa: B023
            assert not console.all("main p.error:not(:empty)"), (who, name, console.text())
            assert console.violations() == [], (who, name, "detail")
    assert console.errors() == []


@pytest.mark.parametrize("who", list(PEOPLE))
def test_a_page_not_in_the_nav_does_not_open(console: Console, who: str) -> None:
    console.signed_in(who)
    shown = {PAGES[title] for title in console.nav()}
    for name in sorted(set(PAGES.values()) - shown):
        console.after_page_shows(
            lambda: console.driver.execute_script(f"location.hash = '#/{name}'")  # noqa: B023
        )
        assert console.find("main").get_attribute("data-page") == "overview"  # shown instead


@pytest.mark.parametrize("who", ["org_admin", "project_admin", "group_admin", "member", "plain"])
def test_the_users_shown_are_the_users_the_caller_may_list(
    console: Console, live: LiveServer, who: str
) -> None:
    console.signed_in(who)
    if "Users" not in console.nav():
        assert listed(live, live.token(who), "/v2/users", "users") == []
        return
    console.visit("users")
    shown = [a.text for a in console.all("main td a")]
    allowed = listed(live, live.token(who), "/v2/users", "users")
    assert shown == [u.get("username") or u.get("email") or u["id"] for u in allowed]
    creates = USER_CREATORS_IN_APOLLO[who] == 201  # the world's table of who may create
    assert bool(console.all("#create-user")) == creates


def test_paging_and_search_happen_on_the_server(console: Console, live: LiveServer) -> None:
    console.signed_in("org_admin")
    console.visit("users")
    first = [a.text for a in console.all("main td a")]
    assert len(first) == 25
    total = len(listed(live, live.token("org_admin"), "/v2/users", "users", limit="1000"))
    assert total == 1000  # a page of the API's own, and more remain
    assert console.find(".pager span").text.endswith(" in all")
    assert int(console.find(".pager span").text.split()[0]) > MANY
    console.after_list_loads(lambda: console.find(".pager button:nth-of-type(2)").click())
    second = [a.text for a in console.all("main td a")]
    assert len(second) == 25 and not set(second) & set(first)
    console.after_list_loads(lambda: console.find(".pager button:nth-of-type(1)").click())
    assert [a.text for a in console.all("main td a")] == first
    console.type("#users-search", "group_admin")
    console.after_list_loads(
        lambda: console.find("main form[role=search] button[type=submit]").click()
    )
    assert [a.text for a in console.all("main td a")] == ["group_admin"]
    assert console.find(".pager span").text == "1 in all"


def test_each_pages_first_view_is_under_a_second(console: Console) -> None:
    console.start()
    assert console.navigation_ms() < FIRST_VIEW_MS
    console.enter(*PEOPLE["org_admin"])
    console.wait_page("overview")
    timings = {"overview": console.page_ms("overview")}
    for name in ("orgs", "users", "groups", "roles", "account"):
        console.visit(name)
        timings[name] = console.page_ms(name)
    slow = {name: ms for name, ms in timings.items() if ms >= FIRST_VIEW_MS}
    assert slow == {}, timings


def test_an_org_admin_manages_users_through_the_console(console: Console, live: LiveServer) -> None:
    admin = live.token("org_admin")
    console.signed_in("org_admin")
    console.visit("users")
    console.find("#create-user").find_element("xpath", "..").find_element(
        "tag name", "summary"
    ).click()
    console.type("#create-user input[name=email]", "newcomer@clinic.test")
    console.type("#create-user input[name=username]", "newcomer")
    console.find("#create-user button[type=submit]").click()
    page = console.wait_for("#user-page")
    user_id = page.get_attribute("data-user")
    assert live.call("GET", f"/v2/users/{user_id}", admin)["user"]["username"] == "newcomer"
    assert mailed(live, "invitation") == ["newcomer@clinic.test"]  # the server invited them
    console.after_page_shows(lambda: console.find("#recovery").click())
    _until(lambda: mailed(live, "account_recovery") == ["newcomer@clinic.test"])
    console.find("#suspend").click()
    console.wait_for("#reactivate")
    assert live.call("GET", f"/v2/users/{user_id}", admin)["user"]["is_active"] is False
    console.find("#reactivate").click()
    console.wait_for("#suspend")
    assert live.call("GET", f"/v2/users/{user_id}", admin)["user"]["is_active"] is True


def test_an_org_admin_edits_a_groups_access_through_the_console(
    console: Console, live: LiveServer, world_template: World
) -> None:
    admin, member = live.token("org_admin"), world_template.users["member"]
    console.signed_in("org_admin")
    console.visit("groups")
    console.type("#create-group input[name=group_name]", "Console group")
    console.find("#create-group button[type=submit]").click()
    group_id = console.wait_for("#group-page").get_attribute("data-group")
    assert live.call("GET", f"/v2/groups/{group_id}", admin)["group"]["name"] == "Console group"
    console.type("#grant-access input[name=grantee_id]", member)
    console.find("#grant-access button[type=submit]").click()
    console.wait_for("#access-editor")
    console.find("#data-add-path").click()
    console.type("#data-path-0", "/notes")
    console.find("#data-read-0").click()
    console.find("#data-write-0").click()
    console.find("#files-add-path").click()
    console.type("#files-path-0", "scans")
    console.find("#files-read-0").click()
    console.after_page_shows(lambda: console.find("#access-editor button[type=submit]").click())
    access = live.call("GET", f"/v2/groups/{group_id}/access/{member}", admin)["group_access"]
    flags = dict.fromkeys(("can_read", "can_write", "can_update", "can_delete"), False)
    assert access["data_paths"] == {"/notes": flags | {"can_read": True, "can_write": True}}
    assert access["file_paths"] == {"/scans": flags | {"can_read": True}}
    assert console.violations() == []
    console.find("#remove-access").click()
    console.wait_for("#group-page")
    assert live.status("GET", f"/v2/groups/{group_id}/access/{member}", admin) == 404


def test_roles_projects_and_orgs_are_made_through_the_console(
    console: Console, live: LiveServer
) -> None:
    admin = live.token("org_admin")
    console.signed_in("org_admin")
    console.visit("roles")
    console.type("#create-role input[name=role_name]", "Console role")
    console.find("#create-role button[type=submit]").click()
    console.wait_for("#role-page")
    assert "Console role" in [r["name"] for r in listed(live, admin, "/v2/roles", "roles")]
    console.visit("orgs")
    console.type("#create-project input[name=project_name]", "Console project")
    console.after_page_shows(lambda: console.find("#create-project button[type=submit]").click())
    projects = listed(live, admin, "/v2/projects", "projects")
    assert "Console project" in [p["name"] for p in projects]
    console.signed_in("staff")
    console.visit("orgs")
    console.type("#create-org input[name=name]", "Console org")
    console.type("#create-org input[name=alias]", "consoleorg")
    console.after_page_shows(lambda: console.find("#create-org button[type=submit]").click())
    orgs = listed(live, live.token("staff"), "/v2/orgs", "orgs", search="consoleorg")
    assert [o["alias"] for o in orgs] == ["consoleorg"]
    assert "orgs" not in [PAGES.get(t) for t in _nav_of(console, "member")]


def _nav_of(console: Console, who: str) -> list[str]:
    console.signed_in(who)
    return console.nav()


def test_a_person_manages_their_account_through_the_console(
    console: Console, live: LiveServer, world_template: World
) -> None:
    user_id = world_template.users["group_editor"]
    console.start()
    console.enter("clinic", "group_editor", PASSWORD)
    console.wait_page("overview")
    console.visit("account")
    console.type("#profile input[name=first_name]", "Grace")
    console.find("#profile button[type=submit]").click()
    admin = live.token("org_admin")
    live_user = lambda: live.call("GET", f"/v2/users/{user_id}", admin)["user"]  # noqa: E731
    _until(lambda: live_user().get("first_name") == "Grace")
    console.type("#change-password input[name=old_password]", PASSWORD)
    console.type("#change-password input[name=new_password]", "Brand-new-pass-3")
    console.find("#change-password button[type=submit]").click()
    console.wait_page("sign-in")  # every session of the account ends, this one too
    assert "password was changed" in console.find("#signed-out-reason").text
    console.enter("clinic", "group_editor", "Brand-new-pass-3")
    console.wait_page("account")  # back where the person was
    console.find("#enroll-mfa").click()
    secret = console.wait_for("#mfa-secret").text
    assert console.find("img.qr").get_attribute("alt")
    console.type("#confirm-mfa input[name=mfa_code]", pyotp.TOTP(secret).now())
    console.find("#confirm-mfa button[type=submit]").click()
    console.wait_for("#recovery-code")
    assert live_user()["software_mfa_enabled"] is True
    console.signed_in("org_admin")  # and the admin resets the lost authenticator
    console.visit("users", user_id)
    console.find("#reset-software-mfa").click()
    _until(lambda: live_user()["software_mfa_enabled"] is False)
    assert console.wait_for("#recovery").is_displayed()  # the page shown again after it


def mailed(live: LiveServer, purpose: str) -> list[str]:
    """The recipients of the outbox's mails of one purpose."""
    rows = live.on_loop(live.site.services.db.read, lambda c: outbox.by_purpose(c, purpose))
    return [str(row["recipient"]) for row in rows]


def _until(check: Any, tries: int = 100) -> None:
    """Wait for the server to show what the console did (the page answers first)."""
    for _ in range(tries):
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("the server never showed the change")
