"""edge/ops/ca.py: the site CA issues the server certificate once for its names, again when
the names change, and again when it is damaged (it is derived from the CA)."""

from __future__ import annotations

from pathlib import Path

from edge.certificates import ca
from tests.edge.ops.test_site_keys import findings


def test_server_certificate_is_reissued_for_new_names(tmp_path: Path) -> None:
    first = ca.server_certificate(tmp_path, ["localhost"])
    before = first.cert.read_bytes()
    assert ca.server_certificate(tmp_path, ["localhost"]).cert.read_bytes() == before
    assert ca.server_certificate(tmp_path, ["localhost", "edge.lan"]).cert.read_bytes() != before


def test_a_damaged_server_certificate_is_issued_again(data_dir: Path) -> None:
    """It is derived from the CA: check warns, and the next start makes a new one."""
    issued = ca.server_certificate(data_dir, ["localhost"])
    issued.key.write_bytes(b"")
    ok, lines = findings(data_dir)
    assert ok and any(line.startswith("warn  keys") and "server" in line for line in lines)
    again = ca.server_certificate(data_dir, ["localhost"])
    assert again.key.stat().st_size > 0 and ca.server_certificate_problem(data_dir) is None
