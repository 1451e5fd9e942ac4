"""The public `cyphermed` SDK against a live server: system, well-known and sign-in calls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TypeVar

import httpx
import jwt
import pytest
from cyphermed.api.auth import login
from cyphermed.api.system import get_jwks, get_version_number, health_check
from cyphermed.api.well_known import get_jwks as get_root_jwks
from cyphermed.api.well_known import get_security_info
from cyphermed.client import AuthenticatedClient, Client
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import HealthInfo, Jwks, LoginFormParams, TokenInfo, VersionInfo

from tests.conftest import STAFF_PASSWORD

T = TypeVar("T")


async def sdk(base_url: str, call: Callable[[Client], T]) -> T:
    """Run one synchronous SDK call in a thread, with a client that is closed afterwards."""

    def run() -> T:
        with Client(base_url=base_url, raise_on_unexpected_status=True) as client:
            return call(client)

    return await asyncio.to_thread(run)


def staff_login(client: Client, password: str = STAFF_PASSWORD) -> object:
    form = LoginFormParams(grant_type="password", username="admin", password=password)
    return login.sync(client=client, body=form)


async def test_health_check_parses(base_url: str) -> None:
    health = await sdk(base_url, lambda c: health_check.sync(client=c))
    assert isinstance(health, HealthInfo)
    assert health.status == "ok"
    assert health.additional_properties["database"] == "ok"
    assert health.additional_properties["writer"] == "ok"


async def test_version_number_parses(base_url: str) -> None:
    info = await sdk(base_url, lambda c: get_version_number.sync(client=c))
    assert isinstance(info, VersionInfo)
    assert info.version == "2.3.18"


async def test_sdk_async_functions_work_too(base_url: str) -> None:
    async with Client(base_url=base_url, raise_on_unexpected_status=True) as client:
        health = await health_check.asyncio(client=client)
        info = await get_version_number.asyncio(client=client)
    assert isinstance(health, HealthInfo) and health.status == "ok"
    assert isinstance(info, VersionInfo) and info.version == "2.3.18"


async def test_both_jwks_operations_parse_the_same_keys(base_url: str) -> None:
    v2 = await sdk(base_url, lambda c: get_jwks.sync(client=c))
    root = await sdk(base_url, lambda c: get_root_jwks.sync(client=c))
    assert isinstance(v2, Jwks) and isinstance(root, Jwks)
    assert v2.to_dict() == root.to_dict()
    assert v2.keys and all(item["alg"] == "ES256" for item in v2.keys)


async def test_staff_login_gives_a_token_info_that_works(base_url: str) -> None:
    info = await sdk(base_url, staff_login)
    assert isinstance(info, TokenInfo)
    assert info.token_type == "Bearer"
    assert 0 < info.expires_in <= 3600
    assert isinstance(info.refresh_token, str) and info.refresh_token

    def list_orgs() -> httpx.Response:
        with AuthenticatedClient(base_url=base_url, token=info.access_token) as client:
            return client.get_httpx_client().get("/v2/orgs")

    response = await asyncio.to_thread(list_orgs)
    assert response.status_code == 200
    assert "orgs" in response.json()


async def test_sdk_token_verifies_against_the_sdk_jwks(base_url: str) -> None:
    info = await sdk(base_url, staff_login)
    keys = await sdk(base_url, lambda c: get_root_jwks.sync(client=c))
    assert isinstance(info, TokenInfo) and isinstance(keys, Jwks)
    kid = jwt.get_unverified_header(info.access_token)["kid"]
    item = next(k for k in keys.keys if k["kid"] == kid)
    claims = jwt.decode(
        info.access_token, jwt.PyJWK(item.to_dict()).key, algorithms=["ES256"], issuer="edge"
    )
    assert claims["sid"]


async def test_refresh_grant_through_the_sdk(base_url: str) -> None:
    first = await sdk(base_url, staff_login)
    assert isinstance(first, TokenInfo) and isinstance(first.refresh_token, str)
    form = LoginFormParams(grant_type="refresh_token", refresh_token=first.refresh_token)
    again = await sdk(base_url, lambda c: login.sync(client=c, body=form))
    assert isinstance(again, TokenInfo)
    assert again.access_token and again.token_type == "Bearer"


async def test_wrong_password_is_a_400_status_for_the_sdk(base_url: str) -> None:
    with pytest.raises(UnexpectedStatus) as caught:
        await sdk(base_url, lambda c: staff_login(c, "not-the-password"))
    assert caught.value.status_code == 400
    assert set(json.loads(caught.value.content)) == {"message"}


async def test_security_info_is_rfc_9116_text(base_url: str) -> None:
    """The spec (RFC 9116: text/plain) wins over the SDK, which reads this body as JSON.

    So `get_security_info` cannot parse it; the raw response through the SDK's client is
    checked instead, and the parse failure is pinned so that a change is a decision.
    """

    def raw(client: Client) -> httpx.Response:
        return client.get_httpx_client().get("/.well-known/security.txt")

    response = await sdk(base_url, raw)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.text.startswith("Contact: mailto:")
    assert f"Canonical: {base_url}/.well-known/security.txt" in response.text
    with pytest.raises(ValueError):
        await sdk(base_url, lambda c: get_security_info.sync(client=c))
