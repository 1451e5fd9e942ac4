"""edge/ops/ca.py: the site CA issues the server certificate once for its names, and again
when the names change."""

from __future__ import annotations

from pathlib import Path

from edge.ops import ca


def test_server_certificate_is_reissued_for_new_names(tmp_path: Path) -> None:
    first = ca.server_certificate(tmp_path, ["localhost"])
    before = first.cert.read_bytes()
    assert ca.server_certificate(tmp_path, ["localhost"]).cert.read_bytes() == before
    assert ca.server_certificate(tmp_path, ["localhost", "edge.lan"]).cert.read_bytes() != before
