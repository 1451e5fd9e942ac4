"""Signing in to the console as a person does, through each challenge the server may
answer with: an authenticator code, a text-message code, the choice between them, a new
password, and setting MFA up where the organization requires it. And signing out, and what a
bad link or a failure right after sign-in leaves behind (nothing: no token stays issued)."""

from __future__ import annotations

import pyotp

from storage.rows import Tx, update
from tests.browser.console import Console, LiveServer, seen_token, watch_tokens
from tests.sign_in import enroll_sms, enroll_software, last_sms, require_mfa, totp
from tests.tenants import PASSWORD
from tests.world import World


def challenge(console: Console, kind: str) -> None:
    """The challenge the server answered with is the one the console asks."""
    console.wait_for(f'[data-challenge="{kind}"]')


def test_an_authenticator_code(console: Console, live: LiveServer, world_template: World) -> None:
    secret = live.run(enroll_software(live.site, world_template.users["holder"]))
    console.start()
    console.enter("clinic", "holder", PASSWORD)
    challenge(console, "SOFTWARE_TOKEN_MFA")
    console.type("#challenge input[name=mfa_code]", totp(secret))
    console.find("#challenge button[type=submit]").click()
    console.wait_page("overview")
    assert console.find("#who-am-i").text == "user"


def test_a_text_message_code(console: Console, live: LiveServer, world_template: World) -> None:
    live.run(enroll_sms(live.site, world_template.users["owner"]))
    console.start()
    console.enter("clinic", "owner", PASSWORD)
    challenge(console, "SMS_MFA")
    console.type("#challenge input[name=mfa_code]", live.on_loop(last_sms, live.site)[1])
    console.find("#challenge button[type=submit]").click()
    shown = console.wait_page("overview")
    assert shown.get_attribute("data-page") == "overview"


def test_choosing_between_two_factors(
    console: Console, live: LiveServer, world_template: World
) -> None:
    user_id = world_template.users["loner"]
    live.run(enroll_sms(live.site, user_id))
    secret = live.run(enroll_software(live.site, user_id))
    live.run(live.site.services.db.write(lambda c: _no_preference(c, user_id)))
    console.start()
    console.enter("clinic", "loner", PASSWORD)
    challenge(console, "SELECT_MFA_TYPE")
    console.find("#challenge select[name=mfa_choice]").send_keys("Authenticator app")
    console.find("#challenge button[type=submit]").click()
    challenge(console, "SOFTWARE_TOKEN_MFA")
    console.type("#challenge input[name=mfa_code]", totp(secret))
    console.find("#challenge button[type=submit]").click()
    shown = console.wait_page("overview")
    assert shown.get_attribute("data-page") == "overview"


def _no_preference(conn: Tx, user_id: str) -> None:
    """Both factors on and none preferred: the server asks which one."""
    update(conn, "users", "id", user_id, {"preferred_mfa": None})


def test_a_new_password(console: Console, live: LiveServer) -> None:
    admin = live.token("org_admin")
    live.call(
        "POST",
        "/v2/users",
        admin,
        email="fresh@clinic.test",
        username="fresh",
        temp_password="Temporary-pass-1",
    )
    console.start()
    console.enter("clinic", "fresh", "Temporary-pass-1")
    challenge(console, "NEW_PASSWORD_REQUIRED")
    assert console.violations() == []
    console.type("#challenge input[name=new_password]", "A-new-password-2")
    console.find("#challenge button[type=submit]").click()
    console.wait_page("overview")
    assert live.token_for("clinic", "fresh", "A-new-password-2")  # the server took it


def test_setting_mfa_up_where_the_org_requires_it(
    console: Console, live: LiveServer, world_template: World
) -> None:
    live.run(require_mfa(live.site, world_template.other.org_id))
    console.start()
    console.enter("other", "admin@other.test", PASSWORD)
    challenge(console, "MFA_SETUP")
    console.wait_for("#mfa-secret")
    assert console.find("img.qr").get_attribute("src").startswith("data:image/")
    secret = console.find("#mfa-secret").text
    console.type("#challenge input[name=mfa_code]", pyotp.TOTP(secret).now())
    console.find("#challenge button[type=submit]").click()
    assert len(console.wait_for("#recovery-code").text) >= 16
    assert console.violations() == []
    console.find("#recovery-saved").click()
    console.wait_page("overview")
    assert console.errors() == []


def test_signing_out_forgets_the_session(console: Console) -> None:
    console.signed_in("member")
    console.find("#sign-out").click()
    console.wait_page("sign-in")
    assert console.find("#signed-out-reason").text == "You signed out."
    assert console.nav() == []
    assert console.driver.execute_script("return sessionStorage.length + localStorage.length") == 0


KEPT = "return Object.keys(sessionStorage).filter((k) => k.startsWith('edge-upload:'))"


def test_an_upload_kept_for_resuming_is_wiped_when_the_server_ends_the_session(
    console: Console, live: LiveServer
) -> None:
    """The session revoked elsewhere: the console's next call is a 401, and the upload the
    person kept to resume (files_upload.js) goes with the session, as at any sign-out."""
    console.start()
    watch_tokens(console)
    console.enter("clinic", "member", PASSWORD)
    console.wait_page("overview")
    console.driver.execute_script("sessionStorage.setItem('edge-upload:someone:/f:1:2', '{}')")
    token = seen_token(console)
    live.call("PUT", "/v2/auth/token/revoke", token)
    console.driver.execute_script("location.hash = '#/account'")
    assert console.wait_for("#signed-out-reason").text == "Your session ended: sign in again."
    assert console.driver.execute_script(KEPT) == []


def test_a_wrong_password_is_told_on_the_form(console: Console) -> None:
    console.start()
    console.enter("clinic", "member", "not-the-password")
    alert = console.wait_for("#sign-in p.error:not(:empty)")
    assert alert.text and console.find("main").get_attribute("data-page") == "sign-in"
    assert console.violations() == []


def test_a_malformed_hash_opens_the_overview(console: Console, live: LiveServer) -> None:
    """A bad percent-escape in the hash (a mistyped or cut link) once threw in the router:
    the console stayed on the sign-in form saying "URI malformed" with a token issued."""
    console.driver.get("about:blank")
    console.driver.get(live.url + "/console/#/users/%E0%A4%A")
    console.wait_page("sign-in")
    console.enter("clinic", "admin@clinic.test", PASSWORD)
    console.wait_page("overview")
    assert "Users" in console.nav()
    console.after_page_shows(
        lambda: console.driver.execute_script("location.hash = '#/groups/%ZZ'")
    )
    console.wait_page("overview")
    assert console.errors() == []


def test_a_failure_after_the_token_is_issued_revokes_it(console: Console, live: LiveServer) -> None:
    """The token is issued, then reading who the person is fails (the network, here): the
    console stays on the sign-in form with the error, and the token no longer works."""
    console.start()
    watch_tokens(
        console,
        " if (String(url).startsWith('/v2/summary'))"
        "  return Promise.reject(new TypeError('offline'));",
    )
    console.enter("clinic", "member", PASSWORD)
    alert = console.wait_for("#sign-in p.error:not(:empty)")
    assert alert.text == "offline" and console.nav() == []
    token = seen_token(console)
    # The error is shown once the revocation was answered (session.js, settle).
    assert live.status("GET", "/v2/account/access/current-session", token) == 401
