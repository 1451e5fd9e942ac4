"""Messages are queued in the durable outbox with their texts filled in."""

from __future__ import annotations

from dataclasses import replace

import pytest

from edge.app import Site
from edge.delivery import templating
from edge.delivery.messages import Recipient
from edge.kernel import clock
from edge.kernel.errors import NotFound
from edge.kernel.principal import Principal
from storage import outbox, staff
from tests.conftest import Api
from tests.tenants import new_tenant


@pytest.fixture
async def to(site: Site, api: Api) -> Recipient:
    tenant = await new_tenant(site, api, "Clinic One", "clinic")
    return Recipient(
        user_id=tenant.admin_id,
        email="nurse@clinic.test",
        phone="+15550001111",
        username="nurse",
        org_id=tenant.org_id,
        org_name="Clinic One",
    )


def queued(site: Site, purpose: str) -> list[dict[str, object]]:
    return site.services.db.read(lambda c: outbox.by_purpose(c, purpose))


async def test_invitation_carries_the_temporary_password(site: Site, to: Recipient) -> None:
    await site.services.messages.invitation(to, "Temp-Pass-123")
    [mail] = queued(site, "invitation")
    assert mail["channel"] == "mail" and mail["recipient"] == "nurse@clinic.test"
    assert mail["subject"] == "Your Clinic One account"
    assert "Temp-Pass-123" in str(mail["body_text"]) and mail["status"] == "pending"


async def test_recovery_and_sms_code(site: Site, to: Recipient) -> None:
    await site.services.messages.account_recovery(to, "reset-token-xyz", 24)
    await site.services.messages.sms_code(to, "+15550001111", "123456")
    [mail] = queued(site, "account_recovery")
    assert "reset-token-xyz" in str(mail["body_text"]) and "24 hours" in str(mail["body_text"])
    [sms] = queued(site, "sms_code")
    assert sms["channel"] == "sms" and sms["recipient"] == "+15550001111"
    assert sms["body_text"] == "Clinic One: your verification code is 123456"


# -- templates ---------------------------------------------------------------------------
ALL_VARIABLES = (
    "org_name org_id project_name project_id username first_name last_name nickname"
    " datetime date time zoneinfo temporary_password sign_in_url"
)


async def add_template(site: Site, org_id: str, **body: object) -> str:
    principal = Principal("staff", site.services.db.read(staff.first)["id"], None, org_id)
    values = {"name": "T", "subject": "S", "body_txt": "t", "body_html": "", **body}
    return await site.services.email_templates.create(principal, values)


async def project_of(site: Site, org_id: str, name: str, **settings: object) -> str:
    owner = Principal("staff", site.services.db.read(staff.first)["id"], None, org_id)
    body: dict[str, object] = {"name": name, "create_own_access": False, **settings}
    return await site.services.projects.create(owner, body)


async def test_every_variable_is_rendered(site: Site, to: Recipient) -> None:
    clock.advance(clock.parse("2030-01-02T03:04:05.000000Z") - clock.now())
    text = " | ".join(f"{name}={{{{ {name} }}}}" for name in ALL_VARIABLES.split())
    await add_template(site, to.org_id, body_txt=text, for_new_users=True)
    project_id = await project_of(site, to.org_id, "Ward 7")
    who = replace(
        to,
        project_id=project_id,
        project_name="Ward 7",
        first_name="Ada",
        last_name="Lovelace",
        nickname="ada",
        zoneinfo="Europe/Berlin",
    )
    await site.services.messages.invitation(who, "Temp-1")
    [mail] = queued(site, "invitation")
    got = dict(part.split("=", 1) for part in str(mail["body_text"]).split(" | "))
    assert got == {
        "org_name": "Clinic One",
        "org_id": to.org_id,
        "project_name": "Ward 7",
        "project_id": project_id,
        "username": "nurse",
        "first_name": "Ada",
        "last_name": "Lovelace",
        "nickname": "ada",
        "datetime": "2030-01-02 04:04 CET",
        "date": "2030-01-02",
        "time": "04:04",
        "zoneinfo": "Europe/Berlin",
        "temporary_password": "Temp-1",
        "sign_in_url": site.services.config.base_url,
    }


async def test_html_is_escaped_and_values_are_not_expanded(site: Site, to: Recipient) -> None:
    await add_template(
        site,
        to.org_id,
        subject="Hi {{ nickname }}",
        body_txt="Hi {{ nickname }}",
        body_html="<p>Hi {{ nickname }}</p>",
        for_new_users=True,
    )
    sneaky = replace(to, nickname="<b>x</b> {{ org_name }}")
    await site.services.messages.invitation(sneaky, "pw")
    [mail] = queued(site, "invitation")
    assert mail["body_text"] == "Hi <b>x</b> {{ org_name }}"
    assert mail["body_html"] == "<p>Hi &lt;b&gt;x&lt;/b&gt; {{ org_name }}</p>"
    assert mail["subject"] == "Hi <b>x</b> {{ org_name }}"


def test_rendering_is_substitution_only() -> None:
    values = {"username": "{{ username }}"}
    assert templating.render("{{username}}{{ username }}", values) == "{{ username }}" * 2
    assert templating.render("{{ username.__class__ }} {{ }}", values) == " "
    assert templating.unknown_names(["{{ a }} {{ org_id }} {{ b }}"], ["b"]) == ["a"]


async def test_locale_choice(site: Site, to: Recipient) -> None:
    await add_template(site, to.org_id, subject="any", locale="fr-FR", for_new_users=True)
    await add_template(site, to.org_id, subject="german", locale="de-DE", for_new_users=True)
    await add_template(site, to.org_id, subject="english", locale="en-US", for_new_users=True)
    for locale, subject in (("de-DE", "german"), ("de-AT", "german"), ("en-US", "english")):
        await site.services.messages.invitation(replace(to, locale=locale), "pw")
        assert queued(site, "invitation")[-1]["subject"] == subject


async def test_locale_falls_back_to_project_then_org_default(site: Site, to: Recipient) -> None:
    owner = Principal("staff", site.services.db.read(staff.first)["id"], None, to.org_id)
    await site.services.orgs.patch(owner, to.org_id, {"default_locale": "fr-FR"})
    await add_template(site, to.org_id, subject="german", locale="de-DE", for_new_users=True)
    await add_template(site, to.org_id, subject="french", locale="fr-FR", for_new_users=True)
    await add_template(site, to.org_id, subject="italian", locale="it-IT", for_new_users=True)
    await site.services.messages.invitation(replace(to, locale="ja-JP"), "pw")
    assert queued(site, "invitation")[-1]["subject"] == "french"


async def test_project_templates_come_before_org_ones(site: Site, to: Recipient) -> None:
    project_id = await project_of(site, to.org_id, "Ward")
    await add_template(site, to.org_id, subject="org", for_account_recovery=True)
    await add_template(
        site, to.org_id, subject="project", project_id=project_id, for_account_recovery=True
    )
    await site.services.messages.account_recovery(replace(to, project_id=project_id), "tok", 2)
    await site.services.messages.account_recovery(to, "tok", 2)
    subjects = [m["subject"] for m in queued(site, "account_recovery")]
    assert subjects == ["project", "org"]


async def test_recovery_with_a_named_template(site: Site, to: Recipient) -> None:
    named = await add_template(
        site, to.org_id, subject="named", body_txt="{{ reset_token }} {{ expires_hours }}h"
    )
    await site.services.messages.account_recovery(to, "tok-9", 12, template_id=named)
    [mail] = queued(site, "account_recovery")
    assert mail["subject"] == "named" and mail["body_text"] == "tok-9 12h"
    with pytest.raises(NotFound):
        await site.services.messages.account_recovery(to, "tok", 1, template_id="missing")


async def test_without_templates_the_built_in_texts_are_used(site: Site, to: Recipient) -> None:
    await add_template(site, to.org_id, subject="inactive", for_new_users=True, is_active=False)
    await add_template(site, to.org_id, subject="recovery only", for_account_recovery=True)
    await site.services.messages.invitation(to, "pw")
    assert queued(site, "invitation")[0]["subject"] == "Your Clinic One account"


async def test_recipient_is_built_from_the_user(site: Site, to: Recipient) -> None:
    found = site.services.messages.recipient(to.user_id)
    assert found.org_name == "Clinic One" and found.email == "admin@clinic.test"
