"""What `edge agent provision` will do (edge_agent/provision.py, `plan`): the claim from
flags over a QR code's text over the configuration file's `[provisioning]`, the state
folder from the flag or the file, and nothing at all once provisioned. The enrollment
itself runs against the real server in test_agent_provisioning.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edge_agent.provision import plan
from edge_agent.settings import SettingsError

NO_FLAGS: dict[str, str | None] = dict.fromkeys(
    ("server", "claim_id", "secret", "qr", "name", "ca", "mqtt", "state_dir")
)
FILE = """
server = "https://from-file:8443"
state_dir = "state"
[provisioning]
claim_id = "file-claim"
secret = "ecs_file"
name = "From the file"
"""


def qr(folder: Path) -> str:
    path = folder / "claim.json"
    enroll = "https://from-qr:8443/v2/provisioning/enroll"
    path.write_text(json.dumps({"enroll": enroll, "claim_id": "qr-claim", "secret": "ecs_qr"}))
    return str(path)


def test_flags_win_over_the_qr_text_which_wins_over_the_file(tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text(FILE)
    from_file = plan(config, NO_FLAGS)
    assert from_file.claim is not None and from_file.state_dir == tmp_path / "state"
    assert (from_file.claim.server, from_file.claim.claim_id) == (
        "https://from-file:8443",
        "file-claim",
    )
    assert from_file.claim.name == "From the file" and "ecs_file" not in repr(from_file)
    from_qr = plan(config, {**NO_FLAGS, "qr": qr(tmp_path)})
    assert from_qr.claim is not None
    assert (from_qr.claim.server, from_qr.claim.claim_id, from_qr.claim.secret) == (
        "https://from-qr:8443",
        "qr-claim",
        "ecs_qr",
    )
    flags = {**NO_FLAGS, "qr": qr(tmp_path), "secret": "ecs_flag", "state_dir": "/var/x"}
    from_flags = plan(config, flags)
    assert from_flags.claim is not None and from_flags.claim.secret == "ecs_flag"
    assert from_flags.state_dir == Path("/var/x") and from_flags.claim.claim_id == "qr-claim"


def test_a_provisioned_device_plans_nothing(tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text(FILE)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "identity.json").write_text("{}")
    assert plan(config, NO_FLAGS).claim is None
    configured = tmp_path / "manual.json"  # a device configured by hand is one too
    configured.write_text(json.dumps({"device_id": "dev1", "state_dir": "elsewhere"}))
    assert plan(configured, NO_FLAGS).claim is None


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        ({"claim_id": "c", "secret": "s"}, "--server: the server's"),
        ({"server": "ftp://x", "claim_id": "c", "secret": "s"}, "--server: the server's"),
        ({"server": "https://x"}, "--claim-id and --secret"),
        ({"qr": "missing.json"}, "--qr: not a claim's QR text"),
    ],
)
def test_what_is_missing_is_named(tmp_path: Path, flags: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        plan(tmp_path / "agent.toml", {**NO_FLAGS, **flags})
