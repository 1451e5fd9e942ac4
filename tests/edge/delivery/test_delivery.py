"""Delivery: a real SMTP server on loopback, retries with back-off, files, an SMS gateway.

The worker is driven step by step and time is moved with edge.kernel.clock: no sleeps. In these
tests the app's background loop is replaced by one that only waits, so it never races a
step of the test; one test runs the real loop inside the app and waits for the mail.
"""

from __future__ import annotations

import asyncio
import email
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from edge.app import Site, create_app, open_site
from edge.delivery.messages import Recipient
from edge.delivery.outbox_worker import OutboxWorker, backoff
from edge.kernel import clock
from edge.kernel.config import Config
from storage import layout, outbox
from tests.conftest import Api
from tests.factory import from_fixture, new_site
from tests.ports import free_port
from tests.tenants import Tenant

SMTP_REFUSAL = "451 4.3.0 Try again later"


@dataclass
class Inbox:
    """An SMTP handler: refuses the first `refuse` messages with 451, then keeps them."""

    port: int
    refuse: int = 0
    received: list[Envelope] = field(default_factory=list)
    refused: int = 0

    arrived: threading.Event = field(default_factory=threading.Event)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.refused < self.refuse:
            self.refused += 1
            return SMTP_REFUSAL
        self.received.append(envelope)
        self.arrived.set()
        return "250 OK"

    def message(self, index: int = 0) -> Message:
        content = self.received[index].content
        assert isinstance(content, bytes)
        return email.message_from_bytes(content)


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    handler = Inbox(free_port())
    controller = Controller(handler, hostname="127.0.0.1", port=handler.port)
    controller.start()
    yield handler
    controller.stop()


# Mail goes by SMTP to the test's inbox (tests/faults/ sends its alerts there too).
MAIL = {
    "smtp_host": "127.0.0.1",
    "smtp_port": from_fixture("inbox", "port"),
    "smtp_security": "none",
    "mail_from": "edge@clinic.test",
}
pytestmark = pytest.mark.world(**MAIL, mail_max_attempts=3)


@pytest.fixture
def site(config: Config) -> Iterator[Site]:
    opened = open_site(config)
    opened.services.outbox_worker.run = idle  # type: ignore[method-assign]
    yield opened
    opened.services.db.close()


async def idle(stop: asyncio.Event) -> None:
    """The app's worker loop in these tests: the test drives the steps itself."""
    await stop.wait()


def rows(site: Site, purpose: str) -> list[dict[str, Any]]:
    return site.services.db.read(lambda c: outbox.by_purpose(c, purpose))


def someone(org_id: str = "") -> Recipient:
    return Recipient("u1", "nurse@clinic.test", "+15550001111", "nurse", org_id, "Clinic")


async def test_the_invitation_of_a_new_user_arrives_by_smtp(
    site: Site, api: Api, inbox: Inbox, tenant: Tenant
) -> None:
    body = {"username": "newbie", "email": "newbie@clinic.test", "temp_password": "Tmp-pass-4567"}
    status, reply = await api.call("POST", "/v2/users", await tenant.admin_token(), json=body)
    assert status == 201, reply
    assert await site.services.outbox_worker.step() == 1
    [envelope] = inbox.received
    assert envelope.rcpt_tos == ["newbie@clinic.test"]
    assert envelope.mail_from == "edge@clinic.test"
    message = inbox.message()
    assert message["Subject"] == "Your Clinic account"
    text = message.get_payload(decode=True)
    assert isinstance(text, bytes)
    assert "Tmp-pass-4567" in text.decode() and "Hello newbie" in text.decode()
    [row] = rows(site, "invitation")
    assert row["status"] == "sent" and row["attempts"] == 1


async def test_the_reset_mail_arrives_by_smtp_and_its_token_sets_a_password(
    site: Site, api: Api, inbox: Inbox, tenant: Tenant
) -> None:
    body = {"username": "forgetful", "email": "forgetful@clinic.test", "password": "Old-pass-4567"}
    status, reply = await api.call("POST", "/v2/users", await tenant.admin_token(), json=body)
    assert status == 201, reply
    status, _ = await api.call(
        "POST",
        "/v2/auth/forgot-password",
        data={"client_id": tenant.alias, "username": "forgetful"},
    )
    assert status == 200
    assert await site.services.outbox_worker.step() == 1
    [envelope] = inbox.received
    assert envelope.rcpt_tos == ["forgetful@clinic.test"]
    text = inbox.message().get_payload(decode=True)
    assert isinstance(text, bytes)
    token = next(
        line.strip()
        for line in text.decode().splitlines()
        if line.startswith("    ") and line.strip()
    )
    status, reply = await api.call(
        "PUT", "/v2/auth/password", token, data={"new_password": "New-pass-7890"}
    )
    assert status == 200, reply
    assert await api.token("forgetful", "New-pass-7890", client_id=tenant.alias)


async def test_a_generated_temporary_password_is_mailed_too(
    site: Site, api: Api, inbox: Inbox, tenant: Tenant
) -> None:
    body = {"username": "gen", "email": "gen@clinic.test"}
    status, _ = await api.call("POST", "/v2/users", await tenant.admin_token(), json=body)
    assert status == 201
    [row] = rows(site, "invitation")
    assert row["recipient"] == "gen@clinic.test" and "    " in row["body_text"]
    body = {"username": "perm", "email": "perm@clinic.test", "password": "Perm-pass-98765!"}
    status, _ = await api.call("POST", "/v2/users", await tenant.admin_token(), json=body)
    assert status == 201
    assert len(rows(site, "invitation")) == 1  # a permanent password needs no invitation


async def test_refusals_are_retried_with_back_off(site: Site, inbox: Inbox) -> None:
    inbox.refuse = 2
    worker = site.services.outbox_worker
    await site.services.messages.invitation(someone(await org(site)), "pw")
    assert await worker.step() == 1
    [row] = rows(site, "invitation")
    assert row["status"] == "pending" and row["attempts"] == 1
    assert "451" in row["last_error"]
    assert clock.parse(row["next_attempt_at"]) - clock.now() <= backoff(1)
    assert await worker.step() == 0  # not due yet
    clock.advance(backoff(1))
    assert await worker.step() == 1
    [row] = rows(site, "invitation")
    assert row["attempts"] == 2 and row["status"] == "pending"
    clock.advance(backoff(1))
    assert await worker.step() == 0  # the second wait is twice as long
    clock.advance(backoff(2) - backoff(1))
    assert await worker.step() == 1
    [row] = rows(site, "invitation")
    assert row["status"] == "sent" and row["attempts"] == 3
    assert len(inbox.received) == 1 and inbox.refused == 2


async def test_a_message_fails_after_the_last_attempt(site: Site, inbox: Inbox) -> None:
    inbox.refuse = 10
    worker = site.services.outbox_worker
    await site.services.messages.invitation(someone(await org(site)), "pw")
    for attempt in range(1, 4):
        assert await worker.step() == 1
        clock.advance(backoff(attempt))
    [row] = rows(site, "invitation")
    assert row["status"] == "failed" and row["attempts"] == 3
    assert await worker.step() == 0 and inbox.received == []


async def test_the_apps_worker_delivers_at_start_and_stops_cleanly(
    data_dir: Path, config: Config, inbox: Inbox, aiohttp_client: Any
) -> None:
    site = open_site(config)
    await site.services.messages.invitation(someone(await org(site)), "pw")
    client = await aiohttp_client(create_app(site))
    arrived = await asyncio.to_thread(inbox.arrived.wait, 10)
    assert arrived and inbox.received[0].rcpt_tos == ["nurse@clinic.test"]
    await client.close()  # the loop is asked to stop and the database closes after it
    assert rows_closed(site)


def rows_closed(site: Site) -> bool:
    try:
        site.services.db.read(lambda c: outbox.by_purpose(c, "invitation"))
    except Exception:
        return True
    return False


def test_backoff_doubles_up_to_an_hour() -> None:
    assert [backoff(n).total_seconds() for n in (1, 2, 3)] == [30, 60, 120]
    assert backoff(30).total_seconds() == 3600


async def test_file_mode_writes_eml_files(data_dir: Path) -> None:
    site = new_site(data_dir)
    try:
        worker = OutboxWorker(site.services.db, site.services.config)
        await site.services.messages.account_recovery(someone(await org(site)), "tok-1", 3)
        assert await worker.step() == 1
        folder = data_dir / layout.OUTBOX_DIR / "mail"
        [path] = list(folder.iterdir())
        assert path.suffix == ".eml"
        message = email.message_from_bytes(path.read_bytes())
        assert message["To"] == "nurse@clinic.test" and message["From"] == "edge@localhost"
        assert message["Subject"] == "Reset your Clinic password"
        [row] = rows(site, "account_recovery")
        assert row["status"] == "sent"
    finally:
        site.services.db.close()


async def test_html_bodies_go_out_as_an_alternative(site: Site, inbox: Inbox) -> None:
    org_id = await org(site)
    row = {
        "id": "m1",
        "channel": "mail",
        "purpose": "test",
        "recipient": "a@b.test",
        "subject": "S",
        "body_text": "plain",
        "body_html": "<p>rich</p>",
        "from_address": "hr@clinic.test",
        "org_id": org_id,
        "next_attempt_at": clock.now_iso(),
        "created_date": clock.now_iso(),
    }
    await site.services.db.write(lambda c: outbox.enqueue(c, row))
    await site.services.outbox_worker.step()
    message = inbox.message()
    assert message.get_content_type() == "multipart/alternative"
    assert message["From"] == "hr@clinic.test"


@dataclass
class Gateway:
    status: int = 200
    calls: list[tuple[dict[str, str], str]] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        self.calls.append((dict(request.headers), await request.text()))
        return web.json_response({"ok": self.status == 200}, status=self.status)


async def test_sms_through_an_http_gateway(data_dir: Path, aiohttp_server: Any) -> None:
    gateway = Gateway(status=503)
    app = web.Application()
    app.router.add_post("/send", gateway.handle)
    server = await aiohttp_server(app)
    site = new_site(
        data_dir,
        sms_gateway_url=str(server.make_url("/send")),
        sms_gateway_auth_header="Bearer gw-key",
    )
    assert "gw-key" not in repr(site.services.config)
    try:
        worker = OutboxWorker(site.services.db, site.services.config)
        await site.services.messages.sms_code(someone(await org(site)), "+15550001111", "123456")
        assert await worker.step() == 1
        [row] = rows(site, "sms_code")
        assert row["status"] == "pending" and "503" in row["last_error"]
        gateway.status = 200
        clock.advance(backoff(1))
        assert await worker.step() == 1
        headers, body = gateway.calls[-1]
        assert headers["Authorization"] == "Bearer gw-key"
        assert headers["Content-Type"] == "application/json"
        assert json.loads(body) == {
            "to": "+15550001111",
            "text": "Clinic: your verification code is 123456",
        }
        assert rows(site, "sms_code")[0]["status"] == "sent"
    finally:
        site.services.db.close()


async def test_sms_file_mode_and_form_gateways(data_dir: Path) -> None:
    site = new_site(data_dir)
    try:
        worker = OutboxWorker(site.services.db, site.services.config)
        await site.services.messages.sms_code(someone(await org(site)), "+15550002222", "999")
        await worker.step()
        [path] = list((data_dir / layout.OUTBOX_DIR / "sms").iterdir())
        assert path.read_text() == "To: +15550002222\n\nClinic: your verification code is 999\n"
    finally:
        site.services.db.close()
    from edge.delivery.sms import HttpSms

    form = HttpSms("http://127.0.0.1:9/", "to={to}&msg={text}", None)
    assert form.render("+1 555", "a&b") == "to=%2B1+555&msg=a%26b"


async def org(site: Site) -> str:
    """An org for the outbox rows to belong to."""
    from edge.kernel.principal import Principal
    from storage import staff

    owner = Principal("staff", site.services.db.read(staff.first)["id"], None)
    return await site.services.orgs.create(owner, {"name": "Clinic", "alias": "clinic"})


async def test_operator_alerts_go_out_through_the_same_worker(site: Site, inbox: Inbox) -> None:
    site.services.alerts.report(500, "GET", "/v2/users", "req-1")
    await site.services.alerts.drain()
    assert await site.services.outbox_worker.step() == 1
    [envelope] = inbox.received
    assert envelope.rcpt_tos == [site.services.config.admin_email]
    assert inbox.message()["Subject"] == "edge: 500 on GET /v2/users"
