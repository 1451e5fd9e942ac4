"""The public `cyphermed` SDK against a live server: e-mail templates.

Every call goes through the SDK unchanged, and every response parses into its model.
"""

from __future__ import annotations

import pytest
from cyphermed.api.emails import (
    create_email_template,
    delete_email_template_by_id,
    get_email_template_by_id,
    get_email_templates,
    patch_email_template,
)
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    CreateEmailTemplateBody,
    EmailTemplateInfo,
    EmailTemplateList,
    NewEmailTemplateInfo,
    PatchEmailTemplateBody,
    Success,
)

from edge.app import Site
from tests.sdk.test_sdk_groups_roles import client_for, in_thread, sign_in
from tests.tenants import Tenant


async def test_sdk_drives_email_templates(base_url: str, site: Site, tenant: Tenant) -> None:
    token = await sign_in(base_url, tenant, tenant.admin_email)
    body = CreateEmailTemplateBody(
        name="Welcome",
        subject="Welcome to {{ org_name }}",
        body_txt="Hello {{ username }}: {{ temporary_password }} {{ badge }}",
        body_html="<p>Hello {{ username }}</p>",
        custom_args=["badge"],
        tags=["onboarding"],
        for_new_users=True,
        locale="de_de",
    )

    def calls() -> None:
        with client_for(base_url, token) as c:
            made = create_email_template.sync(client=c, body=body)
            assert isinstance(made, NewEmailTemplateInfo)
            template_id = made.template.id
            listed = get_email_templates.sync(client=c, for_new_users=True, locale="de-DE")
            assert isinstance(listed, EmailTemplateList)
            assert [t.id for t in listed.templates or []] == [template_id]
            got = get_email_template_by_id.sync(template_id, client=c)
            assert isinstance(got, EmailTemplateInfo)
            assert got.template.custom_args == ["badge"] and got.template.locale == "de-DE"
            assert got.template.for_new_users and not got.template.for_account_recovery
            patch = PatchEmailTemplateBody(subject="Hi {{ first_name }}", is_delete_protected=True)
            assert isinstance(patch_email_template.sync(template_id, client=c, body=patch), Success)
            got = get_email_template_by_id.sync(template_id, client=c)
            assert isinstance(got, EmailTemplateInfo)
            assert got.template.subject == "Hi {{ first_name }}"
            assert got.template.is_delete_protected
            with pytest.raises(UnexpectedStatus):
                delete_email_template_by_id.sync(template_id, client=c)
            done = delete_email_template_by_id.sync(template_id, client=c, force=True)
            assert isinstance(done, Success)
            counted = get_email_templates.sync(client=c, object_count=True)
            assert isinstance(counted, EmailTemplateList) and counted.object_count == 0

    await in_thread(calls)


async def test_sdk_sees_unknown_variables_refused(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    token = await sign_in(base_url, tenant, tenant.admin_email)
    body = CreateEmailTemplateBody(
        name="Bad", subject="x", body_txt="{{ passwrd }}", body_html="", for_new_users=True
    )

    def call() -> None:
        with client_for(base_url, token) as c, pytest.raises(UnexpectedStatus) as refused:
            create_email_template.sync(client=c, body=body)
        assert refused.value.status_code == 400
        assert b"passwrd" in refused.value.content

    await in_thread(call)
