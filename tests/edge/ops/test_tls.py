"""edge/ops/tls.py: the context HTTPS is served with (none without TLS; TLS 1.2 at least;
the operator's pair or the local CA's), and the warnings of what clients are told that the
certificate or the scheme does not bear out."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from edge.certificates import ca
from edge.kernel.errors import ValidationError
from edge.ops import tls
from tests.conftest import make_config


def test_plain_http_has_no_context(tmp_path: Path) -> None:
    assert tls.server_context(make_config(tmp_path)) is None
    assert tls.mismatches(make_config(tmp_path)) == []


def test_the_local_ca_serves_at_least_tls_1_2(tmp_path: Path) -> None:
    config = make_config(tmp_path / "site", tls_local_ca="true")
    context = tls.server_context(config)
    assert context is not None and context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert (tmp_path / "site" / "ca" / "server.pem").exists()


def test_an_operator_pair_that_does_not_belong_together_is_named(tmp_path: Path) -> None:
    one = ca.server_certificate(tmp_path / "one", ["localhost"])
    two = ca.server_certificate(tmp_path / "two", ["localhost"])
    served = make_config(tmp_path / "site", tls_cert=one.cert, tls_key=one.key)
    assert tls.server_context(served) is not None
    wrong = make_config(tmp_path / "site", tls_cert=one.cert, tls_key=two.key)
    with pytest.raises(ValidationError) as refused:
        tls.server_context(wrong)
    assert refused.value.field == "tls_cert"


def test_the_operators_certificate_names_are_the_ones_checked(tmp_path: Path) -> None:
    issued = ca.server_certificate(tmp_path / "one", ["edge.plant.test"])
    config = make_config(
        tmp_path / "site",
        tls_cert=issued.cert,
        tls_key=issued.key,
        public_url="https://other.plant.test",
    )
    [warning] = tls.mismatches(config)
    assert "does not name other.plant.test" in warning


@pytest.mark.parametrize(
    ("names", "host", "covered"),
    [
        ("*.plant.test", "edge.plant.test", True),
        ("*.plant.test", "a.edge.plant.test", False),  # one level only
        ("EDGE.plant.test", "edge.PLANT.test", True),
        ("localhost", "edge.plant.test", False),
    ],
)
def test_a_wildcard_covers_one_level(tmp_path: Path, names: str, host: str, covered: bool) -> None:
    config = make_config(
        tmp_path / "site",
        tls_hostnames=names,
        tls_local_ca="true",
        public_url=f"https://{host}",
        mqtt_tls_port=8883,
    )
    found = tls.mismatches(config)
    assert (found == []) is covered, found


def test_explicit_tls_hostnames_win_and_a_gap_is_warned_about(tmp_path: Path) -> None:
    config = make_config(
        tmp_path / "site",
        public_url="http://edge.plant.test:8080",
        tls_hostnames="localhost,gateway.test",
        mqtt_tls_port=8883,
    )
    assert config.certificate_names == ("localhost", "gateway.test")
    [warning] = tls.mismatches(config)
    assert "does not name edge.plant.test" in warning and "tls_hostnames" in warning
    covered = make_config(
        tmp_path / "x",
        tls_hostnames="*.plant.test",
        mqtt_tls_port=8883,
        public_url="http://edge.plant.test:8080",
    )
    assert tls.mismatches(covered) == []  # a wildcard one level up covers it


def test_an_https_public_url_without_tls_is_warned_about(tmp_path: Path) -> None:
    config = make_config(tmp_path / "site", public_url="https://edge.plant.test:8080")
    [warning] = tls.mismatches(config)
    assert "public_url" in warning and "plain HTTP" in warning
    served = make_config(
        tmp_path / "site", public_url="https://edge.plant.test:8080", tls_local_ca="true"
    )
    assert tls.mismatches(served) == []  # the derived names include edge.plant.test
    assert "edge.plant.test" in served.certificate_names
