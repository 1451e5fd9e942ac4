"""Presigned URLs alone: what the signature covers, expiry, and the key on disk."""

from __future__ import annotations

import dataclasses
import stat
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from edge.files.signing import KEY_FILE, PREFIX, Grant, UrlSigner, load_key
from edge.kernel import clock
from edge.kernel.errors import Denied

GRANT = Grant("PUT", "group0000000001", "/a b/ü.txt", ("write", "delete"), 0, "upload00000001", 3)


def signed(signer: UrlSigner, grant: Grant) -> tuple[str, dict[str, str]]:
    parts = urlsplit(signer.url("http://edge.test", grant))
    return parts.path, dict(parse_qsl(parts.query))


def fresh(grant: Grant = GRANT) -> Grant:
    return dataclasses.replace(grant, expires=int(clock.now().timestamp()) + 60)


def test_a_url_verifies_as_issued() -> None:
    signer, grant = UrlSigner(b"k" * 32), fresh()
    path, query = signed(signer, grant)
    assert path == f"{PREFIX}/group0000000001/files/a%20b/%C3%BC.txt"
    assert query["rights"] == "write,delete" and "signature" in query
    assert signer.verify("PUT", grant.group_id, grant.path, query) == grant


@pytest.mark.parametrize(
    "change",
    [
        {"method": "GET"},
        {"group_id": "group0000000002"},
        {"path": "/a b/other.txt"},
        {"upload_id": "upload00000002"},
        {"part_number": 4},
        {"rights": ("write", "update", "delete")},
    ],
)
def test_every_bound_field_is_signed(change: dict[str, object]) -> None:
    signer, grant = UrlSigner(b"k" * 32), fresh()
    _, query = signed(signer, grant)
    other = dataclasses.replace(grant, **change)  # type: ignore[arg-type]
    query.update(signed(UrlSigner(b"x" * 32), other)[1])  # the other grant's fields...
    query["signature"] = signed(signer, grant)[1]["signature"]  # ...with the true signature
    with pytest.raises(Denied):
        signer.verify(other.method, other.group_id, other.path, query)


def test_another_key_or_a_later_expiry_is_refused() -> None:
    grant = fresh()
    _, query = signed(UrlSigner(b"k" * 32), grant)
    with pytest.raises(Denied, match="signature"):
        UrlSigner(b"x" * 32).verify("PUT", grant.group_id, grant.path, query)
    query["expires"] = str(grant.expires + 3600)
    with pytest.raises(Denied, match="signature"):
        UrlSigner(b"k" * 32).verify("PUT", grant.group_id, grant.path, query)


def test_an_expired_url_is_refused() -> None:
    signer, grant = UrlSigner(b"k" * 32), fresh()
    _, query = signed(signer, grant)
    clock.advance(timedelta(seconds=61))
    with pytest.raises(Denied, match="expired"):
        signer.verify("PUT", grant.group_id, grant.path, query)


def test_the_key_is_made_once_and_private(tmp_path: Path) -> None:
    first = load_key(tmp_path)
    assert len(first) == 32 and load_key(tmp_path) == first
    mode = (tmp_path / "keys" / KEY_FILE).stat().st_mode
    assert stat.S_IMODE(mode) == 0o600
