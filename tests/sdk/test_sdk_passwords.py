"""The public `cyphermed` SDK changes a password, asks for a reset, and uses the token."""

from __future__ import annotations

import asyncio
import re

from cyphermed.api.auth import forgot_password, login, set_password
from cyphermed.client import AuthenticatedClient, Client
from cyphermed.models import (
    ForgotPasswordFormParams,
    LoginFormParams,
    SetPasswordFormParams,
    Success,
    TokenInfo,
)

from edge.app import Site
from storage import outbox
from tests.tenants import PASSWORD, Tenant


def sign_in(base_url: str, password: str) -> TokenInfo:
    form = LoginFormParams(
        grant_type="password", username="nightnurse", password=password, client_id="clinic"
    )
    with Client(base_url=base_url, raise_on_unexpected_status=True) as client:
        info = login.sync(client=client, body=form)
    assert isinstance(info, TokenInfo)
    return info


def change(base_url: str, token: str, new: str, old: str | None = None) -> object:
    body = SetPasswordFormParams(new_password=new)
    if old is not None:
        body.old_password = old
    with AuthenticatedClient(base_url=base_url, token=token) as client:
        return set_password.sync(client=client, body=body)


async def test_sdk_changes_a_password_then_resets_it(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    await tenant.add_user("nightnurse")
    info = await asyncio.to_thread(sign_in, base_url, PASSWORD)
    done = await asyncio.to_thread(
        change, base_url, info.access_token, "changed-by-sdk-1", PASSWORD
    )
    assert isinstance(done, Success)
    await asyncio.to_thread(sign_in, base_url, "changed-by-sdk-1")

    def ask() -> object:
        form = ForgotPasswordFormParams(client_id="clinic", username="nightnurse")
        with Client(base_url=base_url, raise_on_unexpected_status=True) as client:
            return forgot_password.sync(client=client, body=form)

    assert isinstance(await asyncio.to_thread(ask), Success)
    (mail,) = site.services.db.read(lambda c: outbox.by_purpose(c, "account_recovery"))
    found = re.search(r"^    (\S+)$", mail["body_text"], re.M)
    assert found is not None
    # The reset token is the bearer token of SetPasswordFormParams without old_password.
    done = await asyncio.to_thread(change, base_url, found.group(1), "reset-by-sdk-2")
    assert isinstance(done, Success)
    await asyncio.to_thread(sign_in, base_url, "reset-by-sdk-2")
