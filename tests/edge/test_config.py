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


@pytest.mark.parametrize(("most", "reserve"), [(5, 10), (5, 5), (1, 10)])
def test_a_reserve_of_every_running_job_place_is_refused(
    tmp_path: Path, most: int, reserve: int
) -> None:
    """jobs_max_running 5 with the default reserve of 10: no one but an org admin could
    ever make a job, refused with a 409 blaming the org's running jobs (it ran none)."""
    with pytest.raises(ConfigError, match="jobs_admin_reserve.*jobs_max_running"):
        make_config(tmp_path / "site", jobs_max_running=most, jobs_admin_reserve=reserve)


def test_a_reserve_below_the_running_jobs_leaves_others_a_place(tmp_path: Path) -> None:
    config = make_config(tmp_path / "site", jobs_max_running=5, jobs_admin_reserve=4)
    assert (config.jobs_max_running, config.jobs_admin_reserve) == (5, 4)


def test_default_certificate_names_are_the_local_ones(tmp_path: Path) -> None:
    """A site without public_url keeps the names it had (no new certificate on upgrade)."""
    assert make_config(tmp_path).certificate_names == ("localhost", "127.0.0.1")
