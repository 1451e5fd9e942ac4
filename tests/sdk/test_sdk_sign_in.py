"""The public `cyphermed` SDK signing in: challenges (new password, software MFA, MFA
setup), a refresh, SMS MFA, and the MFA preference, through the SDK's own calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from cyphermed.api.auth import (
    add_sms_mfa,
    add_software_mfa,
    get_mfa_secret_code,
    login,
    patch_mfa_settings,
    remove_software_mfa,
    respond_to_challenge,
)
from cyphermed.api.users import disable_user_software_mfa, get_user_by_id, send_recovery_email
from cyphermed.client import AuthenticatedClient, Client
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    Challenge,
    LoginFormParams,
    MfaSecretCode,
    PatchMfaSettingsFormParams,
    RespondToChallengeFormParams,
    SmsMfaAdded,
    SoftwareMfaAdded,
    Success,
    TokenInfo,
    UserInfo,
)
from cyphermed.models.add_sms_mfa_form_params import AddSmsMfaFormParams
from cyphermed.models.add_software_mfa_form_params import AddSoftwareMfaFormParams
from cyphermed.models.remove_software_mfa_form_params import RemoveSoftwareMfaFormParams

from edge.app import Site
from tests.sign_in import enroll_sms, enroll_software, last_sms, require_mfa, totp, user
from tests.tenants import PASSWORD, Tenant

T = TypeVar("T")


async def run(base_url: str, token: str | None, fn: Callable[..., T], **kwargs: Any) -> T:
    """One synchronous SDK call in a thread, with a client (bearer `token`) closed after."""

    def call() -> T:
        if token is None:
            with Client(base_url=base_url, raise_on_unexpected_status=True) as anon:
                return fn(client=anon, **kwargs)
        with AuthenticatedClient(
            base_url=base_url, token=token, raise_on_unexpected_status=True
        ) as client:
            return fn(client=client, **kwargs)

    return await asyncio.to_thread(call)


async def sign_in(base_url: str, tenant: Tenant, name: str, password: str = PASSWORD) -> Any:
    body = LoginFormParams(
        grant_type="password", client_id=tenant.alias, username=name, password=password
    )
    return await run(base_url, None, login.sync, body=body)


def reply(tenant: Tenant, kind: str, **form: Any) -> RespondToChallengeFormParams:
    return RespondToChallengeFormParams(client_id=tenant.alias, challenge=kind, **form)


async def test_new_password_required_then_refresh(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    await tenant.add_user("sdknew", has_temporary_password=1)
    challenge = await sign_in(base_url, tenant, "sdknew")
    assert isinstance(challenge, Challenge) and challenge.challenge == "NEW_PASSWORD_REQUIRED"
    info = await run(
        base_url,
        challenge.session,
        respond_to_challenge.sync,
        body=reply(tenant, "NEW_PASSWORD_REQUIRED", new_password="sdk-new-pass-1"),
    )
    assert isinstance(info, TokenInfo) and isinstance(info.refresh_token, str)
    refreshed = await run(
        base_url,
        None,
        login.sync,
        body=LoginFormParams(grant_type="refresh_token", refresh_token=info.refresh_token),
    )
    assert isinstance(refreshed, TokenInfo) and refreshed.access_token


async def test_software_token_mfa(base_url: str, site: Site, tenant: Tenant) -> None:
    secret = await enroll_software(site, await tenant.add_user("sdktotp"))
    challenge = await sign_in(base_url, tenant, "sdktotp")
    assert isinstance(challenge, Challenge) and challenge.challenge == "SOFTWARE_TOKEN_MFA"
    info = await run(
        base_url,
        challenge.session,
        respond_to_challenge.sync,
        body=reply(tenant, "SOFTWARE_TOKEN_MFA", mfa_code=totp(secret)),
    )
    assert isinstance(info, TokenInfo)


async def test_mfa_setup_through_the_sdk(base_url: str, site: Site, tenant: Tenant) -> None:
    await require_mfa(site, tenant.org_id)
    user_id = await tenant.add_user("sdksetup")
    challenge = await sign_in(base_url, tenant, "sdksetup")
    assert isinstance(challenge, Challenge) and challenge.challenge == "MFA_SETUP"
    client = challenge.session
    secret = await run(base_url, client, get_mfa_secret_code.sync)
    assert isinstance(secret, MfaSecretCode)
    form = AddSoftwareMfaFormParams(client_id=tenant.alias, mfa_code=totp(secret.secret_code))
    added = await run(base_url, client, add_software_mfa.sync, form_data=form)
    assert isinstance(added, SoftwareMfaAdded) and isinstance(added.session, str)
    info = await run(
        base_url,
        added.session,
        respond_to_challenge.sync,
        body=reply(tenant, "MFA_SETUP"),
    )
    assert isinstance(info, TokenInfo)
    mine = info.access_token
    form_rm = RemoveSoftwareMfaFormParams(recovery_code=added.recovery_code)
    assert isinstance(
        await run(base_url, mine, remove_software_mfa.sync, form_data=form_rm), Success
    )
    assert not user(site, user_id)["software_mfa_enabled"]


async def test_sms_mfa_and_preference(base_url: str, site: Site, tenant: Tenant) -> None:
    await tenant.add_user("sdksms")
    info = await sign_in(base_url, tenant, "sdksms")
    assert isinstance(info, TokenInfo)
    client = info.access_token
    form = AddSmsMfaFormParams(phone_number="+15550107000")
    pending = await run(base_url, client, add_sms_mfa.sync, form_data=form)
    assert isinstance(pending, SmsMfaAdded) and pending.message
    form.additional_properties["verification_code"] = last_sms(site)[1]
    added = await run(base_url, client, add_sms_mfa.sync, form_data=form)
    assert isinstance(added, SmsMfaAdded) and isinstance(added.recovery_code, str)
    prefs = PatchMfaSettingsFormParams(preferred_mfa="SMS")
    assert isinstance(await run(base_url, client, patch_mfa_settings.sync, body=prefs), Success)


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [("SOFTWARE_TOKEN_MFA", "SOFTWARE"), ("software", "SOFTWARE"), ("SMS_MFA", "SMS")],
)
async def test_preferred_mfa_spellings(
    base_url: str, site: Site, tenant: Tenant, spelling: str, canonical: str
) -> None:
    """The challenge names and the SDK's `mfa_choice` words set the preference; the user
    record answers SOFTWARE or SMS."""
    user_id = await tenant.add_user("sdkpref")
    client = await tenant.token("sdkpref@clinic.test")
    await enroll_software(site, user_id)
    await enroll_sms(site, user_id)
    other = "SMS" if canonical == "SOFTWARE" else "SOFTWARE"
    await site.services.mfa.set_preferred(user(site, user_id), other)
    prefs = PatchMfaSettingsFormParams(preferred_mfa=spelling)
    assert isinstance(await run(base_url, client, patch_mfa_settings.sync, body=prefs), Success)
    got = await run(base_url, client, get_user_by_id.sync, user_id=user_id)
    assert isinstance(got, UserInfo) and got.user.preferred_mfa == canonical
    bad = PatchMfaSettingsFormParams(preferred_mfa="SELECT_MFA_TYPE")
    with pytest.raises(UnexpectedStatus) as refused:
        await run(base_url, client, patch_mfa_settings.sync, body=bad)
    assert refused.value.status_code == 400


async def test_admin_calls(base_url: str, site: Site, tenant: Tenant) -> None:
    user_id = await tenant.add_user("sdkadm")
    await enroll_software(site, user_id)
    admin = await tenant.token()
    done = await run(base_url, admin, disable_user_software_mfa.sync, user_id=user_id)
    assert isinstance(done, Success) and not user(site, user_id)["software_mfa_enabled"]
    assert isinstance(
        await run(base_url, admin, send_recovery_email.sync, user_id=user_id), Success
    )
