"""edge/kernel/config.py: settings that go together, and the names the certificate holds by
default."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.kernel.config import ConfigError
from tests.conftest import make_config


def test_certificate_and_key_go_together(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="tls_key"):
        make_config(tmp_path / "site", tls_cert=tmp_path / "cert.pem")


def test_default_certificate_names_are_the_local_ones(tmp_path: Path) -> None:
    """A site without public_url keeps the names it had (no new certificate on upgrade)."""
    assert make_config(tmp_path).certificate_names == ("localhost", "127.0.0.1")
