"""The agent's configuration file (edge_agent/settings.py): TOML or JSON, paths from the
file's folder, the API key from an owner-only file, and every bad or unknown key refused
in one line naming it (exit code 2 from `edge agent`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from edge_agent.settings import CertificateSettings, Settings, SettingsError, load

BASE = {
    "server": "https://edge.plant.lan:8443",
    "device_id": "dev1",
    "root_scope": "org1/proj1",
    "state_dir": "state",
    "credentials": {"api_key_file": "key"},
}


def written(folder: Path, table: dict[str, Any], name: str = "agent.json") -> Path:
    key = folder / "key"
    if not key.exists():
        key.write_text("edk_secret\n")
        key.chmod(0o600)
    path = folder / name
    path.write_text(json.dumps(table))
    return path


def test_a_toml_file_with_every_section(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("edk_secret\n")
    key.chmod(0o600)
    path = tmp_path / "agent.toml"
    path.write_text(
        """
server = "https://edge.plant.lan:8443/"
mqtt = "mqtts://edge.plant.lan:8883"
device_id = "dev1"
root_scope = "org1/proj1"
state_dir = "/var/lib/edge-agent"
[credentials]
api_key_file = "key"
ca_file = "ca.pem"
[twin]
apply = "/usr/local/bin/apply"
[commands]
handler = ["/usr/local/bin/on-command", "--json"]
concurrency = 2
[tunnels.services]
SSH = "22"
HMI = "192.168.10.7:80"
[certificates]
renew_before_days = 14
check_seconds = 600
"""
    )
    settings = load(path)
    assert settings.server == "https://edge.plant.lan:8443"
    assert settings.mqtt_url == "mqtts://edge.plant.lan:8883"
    assert settings.api_key == "edk_secret" and "edk_secret" not in repr(settings)
    assert settings.ca_file == tmp_path / "ca.pem"
    assert settings.namespace == "org1/proj1/devices/dev1"
    assert settings.twin is not None and settings.twin.apply == ["/usr/local/bin/apply"]
    assert settings.twin.reported_file == Path("/var/lib/edge-agent/reported.json")
    assert settings.commands is not None and settings.commands.concurrency == 2
    assert settings.services == {"ssh": ("127.0.0.1", 22), "hmi": ("192.168.10.7", 80)}
    assert settings.certificates == CertificateSettings(renew_before_days=14, check_seconds=600)


def test_defaults_and_features_left_out(tmp_path: Path) -> None:
    settings = load(written(tmp_path, BASE))
    assert settings.mqtt_url == "mqtt://edge.plant.lan:1883"
    assert settings.state_dir == tmp_path / "state"
    assert (settings.twin, settings.commands, settings.services) == (None, None, {})
    assert (settings.reconnect_min, settings.reconnect_max) == (1.0, 60.0)
    assert settings.certificates == CertificateSettings(renew_before_days=30, check_seconds=3600)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"colour": 1}, "colour: not a setting"),
        ({"server": "ftp://x"}, "server: must be a URL"),
        ({"mqtt": "mqtt://host:99999"}, "mqtt: the port"),
        ({"device_id": ""}, "device_id: required"),
        ({"state_dir": 5}, "state_dir: required"),
        ({"credentials": {"api_key_file": "missing"}}, "credentials.api_key_file: "),
        ({"twin": {"apply": "x", "every": 2}}, "twin.every: not a setting"),
        ({"twin": {"apply": [1]}}, "twin.apply: a program"),
        ({"twin": {"poll_seconds": 0}}, "twin.poll_seconds: must be a positive"),
        ({"commands": {}}, "commands.handler: a program"),
        ({"commands": {"handler": "x", "concurrency": 0}}, "commands.concurrency"),
        ({"tunnels": {"services": {"SSH": "host:port"}}}, "tunnels.services.SSH"),
        ({"reconnect": {"min_seconds": 5, "max_seconds": 1}}, "reconnect.max_seconds"),
        ({"jobs": {}}, "jobs.handler: a program"),
        ({"jobs": {"handler": "x", "idempotent": "yes"}}, "jobs.idempotent: must be true"),
        ({"jobs": {"handler": "x", "timeout_seconds": -1}}, "jobs.timeout_seconds"),
        ({"provisioning": {"claim": "x"}}, "provisioning.claim: not a setting"),
        ({"credentials": {"api_key_file": "key", "certificate_file": "c"}}, "goes with"),
        ({"certificates": {"renew_before_days": 0}}, "certificates.renew_before_days: must be a"),
        ({"certificates": {"check_seconds": "1h"}}, "certificates.check_seconds: must be a"),
        ({"certificates": {"every": 1}}, "certificates.every: not a setting"),
    ],
)
def test_a_bad_setting_is_named(tmp_path: Path, change: dict[str, Any], named: str) -> None:
    with pytest.raises(SettingsError, match=named.replace(".", r"\.")):
        load(written(tmp_path, {**BASE, **change}))


def test_an_api_key_others_may_read_is_refused(tmp_path: Path) -> None:
    path = written(tmp_path, BASE)
    (tmp_path / "key").chmod(0o644)
    with pytest.raises(SettingsError, match="others may read it .mode 0644.; chmod 600"):
        load(path)


def test_the_api_key_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDGE_DEVICE_API_KEY", "edk_env")
    settings: Settings = load(written(tmp_path, {**BASE, "credentials": {}}))
    assert settings.api_key == "edk_env"


def test_edge_agent_refuses_a_bad_file_in_one_line_with_exit_code_2(tmp_path: Path) -> None:
    path = written(tmp_path, {**BASE, "twin": {"aply": ["x"]}})
    edge = str(Path(sys.executable).with_name("edge"))
    done = subprocess.run(
        [edge, "agent", "--config", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "edge agent: twin.aply: not a setting of the agent\n"


def test_jobs_and_their_defaults(tmp_path: Path) -> None:
    settings = load(written(tmp_path, {**BASE, "jobs": {"handler": ["/bin/job", "-v"]}}))
    assert settings.jobs is not None and settings.jobs.handler == ["/bin/job", "-v"]
    assert (settings.jobs.timeout_seconds, settings.jobs.idempotent) == (3600.0, False)


def certificate_files(folder: Path, key_mode: int = 0o600) -> dict[str, str]:
    (folder / "device.pem").write_text("certificate")
    (folder / "device.key").write_text("key")
    (folder / "device.key").chmod(key_mode)
    return {"certificate_file": "device.pem", "key_file": "device.key"}


def test_a_client_certificate_signs_in_without_an_api_key(tmp_path: Path) -> None:
    table = {**BASE, "mqtt": "mqtts://edge:8883", "credentials": certificate_files(tmp_path)}
    settings = load(written(tmp_path, table))
    assert settings.certificate_file == tmp_path / "device.pem"
    assert settings.key_file == tmp_path / "device.key" and settings.api_key == ""


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"mqtt": "mqtt://edge:1883"}, "mqtt: a client certificate signs in over mqtts:// only"),
        ({"jobs": {"handler": "x"}}, "credentials.api_key_file: tunnels and jobs need it"),
        ({"tunnels": {"services": {"SSH": "22"}}}, "credentials.api_key_file: tunnels and jobs"),
    ],
)
def test_what_a_certificate_alone_cannot_do(
    tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    table = {**BASE, "mqtt": "mqtts://edge:8883", "credentials": certificate_files(tmp_path)}
    with pytest.raises(SettingsError, match=named.replace(".", r"\.")):
        load(written(tmp_path, {**table, **change}))


def test_a_private_key_others_may_read_is_refused(tmp_path: Path) -> None:
    credentials = certificate_files(tmp_path, key_mode=0o640)
    table = {**BASE, "mqtt": "mqtts://edge:8883", "credentials": credentials}
    with pytest.raises(SettingsError, match="credentials.key_file: .* others may read it"):
        load(written(tmp_path, table))


def test_a_provisioned_device_runs_from_what_provisioning_kept(tmp_path: Path) -> None:
    """Without `device_id`, the identity `edge agent provision` wrote in the state folder
    fills in the device, its broker and its credentials; the file's own values win."""
    state = tmp_path / "state"
    state.mkdir()
    certificate_files(state)
    (state / "api_key").write_text("edk_provisioned")
    (state / "api_key").chmod(0o600)
    identity = {
        "server": "https://edge.plant.lan:8443",
        "device_id": "dev9",
        "root_scope": "org1/proj1",
        "mqtt": "mqtts://edge.plant.lan:8883",
        "credentials": {
            "api_key_file": "api_key",
            "certificate_file": "device.pem",
            "key_file": "device.key",
            "ca_file": "ca.pem",
        },
    }
    (state / "identity.json").write_text(json.dumps(identity))
    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"state_dir": "state", "client_id": "pump", "mqtt": "mqtts://b:1"}))
    settings = load(path)
    assert (settings.device_id, settings.root_scope) == ("dev9", "org1/proj1")
    assert (
        settings.server == "https://edge.plant.lan:8443" and settings.api_key == "edk_provisioned"
    )
    assert settings.mqtt_url == "mqtts://b:1" and settings.client_id == "pump"
    assert (
        settings.certificate_file == state / "device.pem" and settings.ca_file == state / "ca.pem"
    )


def test_no_device_and_no_provisioning_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"server": "https://edge", "state_dir": "state"}))
    with pytest.raises(SettingsError, match="device_id: required .or run `edge agent provision`"):
        load(path)
