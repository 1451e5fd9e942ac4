"""The access line of every request: who asked for what, never a token or a query string."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from api.middleware import loggable_path
from edge.app import Site, create_app
from storage import staff
from tests.conftest import Api
from tests.factory import new_site


def access_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "edge.access"]


async def test_access_lines_name_the_account_never_the_token_or_query(
    api: Api, site: Site, staff_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    headers = {"Authorization": f"Bearer {staff_token}", "X-Request-ID": "req-42"}
    with caplog.at_level(logging.INFO, logger="edge.access"):
        response = await api.client.get(
            "/v2/orgs?X-Amz-Signature=s3cr3t&access_token=tok3n", headers=headers
        )
    [record] = access_records(caplog)
    owner = site.services.db.read(staff.first)
    assert (record.method, record.path, record.status) == ("GET", "/v2/orgs", response.status)
    assert record.principal == owner["id"] and record.client == "127.0.0.1"
    assert record.request_id == "req-42" and record.duration_ms >= 0
    assert f"principal={owner['id']} request_id=req-42" in record.getMessage()
    for secret in (staff_token, "s3cr3t", "tok3n", "?"):
        assert secret not in caplog.text


async def test_unauthenticated_requests_are_logged_without_a_principal(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="edge.access"):
        status, _ = await api.call("GET", "/v2/orgs", "not-a-token")
    [record] = access_records(caplog)
    assert status == 401 and record.status == 401 and record.principal is None
    assert "principal=- " in record.getMessage() and "not-a-token" not in caplog.text


async def test_the_access_log_can_be_turned_off(
    aiohttp_client: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = new_site(tmp_path / "quiet", access_log="false")
    api = Api(await aiohttp_client(create_app(site)))
    with caplog.at_level(logging.INFO, logger="edge.access"):
        status, _ = await api.call("GET", "/v2/health")
    assert status == 200 and access_records(caplog) == []


def test_paths_that_could_break_a_log_line_are_escaped() -> None:
    assert loggable_path("/v2/files/a%20b?signature=x") == "/v2/files/a%20b"
    assert loggable_path("/v2/a\x1b[31m\nb?x=1") == "/v2/a\\x1b[31m\\nb"
