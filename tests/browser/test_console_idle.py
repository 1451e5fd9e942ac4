"""The idle sign-out: after `console_idle_minutes` without input the console revokes the
token and asks to sign in again, saying why; input keeps the person signed in. A short
setting here (6 seconds), so the test waits for the outcome rather than a quarter hour."""

from __future__ import annotations

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.console import WAIT, Console, LiveServer, seen_token, watch_tokens
from tests.tenants import PASSWORD

SERVER_SETTINGS = {"console_idle_minutes": 0.1}


def test_the_console_signs_out_after_the_idle_minutes(console: Console, live: LiveServer) -> None:
    console.signed_in("member")
    WebDriverWait(console.driver, WAIT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#signed-out-reason")
    )
    reason = console.find("#signed-out-reason").text
    assert reason == "Signed out after 0.1 minutes without input."
    assert console.nav() == []


def test_the_idle_sign_out_wipes_an_upload_kept_for_resuming(console: Console) -> None:
    """An upload kept to resume (files_upload.js) is the person's: it goes at the idle
    sign-out, or the next person in the tab would resume it under their own name."""
    console.signed_in("member")
    console.driver.execute_script("sessionStorage.setItem('edge-upload:someone:/f:1:2', '{}')")
    console.wait_for("#signed-out-reason")
    assert console.driver.execute_script("return sessionStorage.length") == 0


def test_the_idle_sign_out_revokes_the_token(console: Console, live: LiveServer) -> None:
    """The token the console held (seen on its requests) no longer works once it is gone."""
    console.start()
    watch_tokens(console)
    console.enter("clinic", "member", PASSWORD)
    console.wait_page("overview")
    token = seen_token(console)
    assert live.call("GET", "/v2/summary", token)["summary"]  # the console's own token
    console.wait_for("#signed-out-reason")
    status = live.status("GET", "/v2/summary", token)
    assert status == 401
