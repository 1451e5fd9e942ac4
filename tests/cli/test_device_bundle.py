"""`edge device bundle` end to end: a device created over HTTP is bundled by the real
command, then reaches the real broker over MQTT/TLS with exactly the bundle's files (real
paho-mqtt, and the bundle's own paho_example.py as a process) and publishes and subscribes
on its topic; the certificate it had before is refused, and the reset is audited as the
operator's. Refusals (a folder in use, an unknown device) change nothing."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest

from edge import cli
from edge.kernel.config import Config
from edge.shell import device_bundle
from storage import layout
from tests.conftest import make_config
from tests.embedded_broker.clients import Client
from tests.ports import free_port
from tests.world import World

pytestmark = pytest.mark.world(mqtt_tls_port=lambda _: free_port(), mqtt_port=lambda _: free_port())


def bundle(config: Config, device_id: str, out: Path) -> tuple[int, str, str]:
    """The real command, with the server's settings (as the service's config file gives)."""
    argv = ["device", "bundle", device_id, "--out", str(out), "--data-dir", str(config.data_dir)]
    for name in ("mqtt_port", "mqtt_tls_port", "mqtt_ws_port", "mqtt_wss_port"):
        argv += [f"--{name.replace('_', '-')}", str(getattr(config, name))]
    return _run(argv)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


async def new_device(world: World) -> dict[str, Any]:
    body = {"name": "bundle-pump", "iot_scopes": {"/sensors": {"can_publish": True}}}
    status, made = await world.call("org_admin", "POST", "/v2/devices", json=body)
    assert status == 201, made
    return dict(made["device"])  # NewDeviceInfo


async def test_a_bundle_connects_over_tls_and_publishes_and_subscribes(
    world: World, config: Config, tmp_path: Path
) -> None:
    """`world` serves the site (its `client`), the broker listening on mqtt_tls_port."""
    made = await new_device(world)
    out = tmp_path / "bundle"
    code, said, err = await asyncio.to_thread(bundle, config, made["id"], out)
    assert code == 0, err
    assert f"mqtts://127.0.0.1:{config.mqtt_tls_port}" in said and "reset" in said
    described = json.loads((out / device_bundle.CONFIG).read_text())
    root = made["root_scope"]
    assert described["broker"] == made["broker"] == "127.0.0.1"
    assert described["mqtts_port"] == config.mqtt_tls_port
    assert described["own_topic"] == f"{root}/devices/{made['id']}"
    assert described["scopes"] == {f"{root}/sensors": {"publish": True, "subscribe": False}}
    assert stat.S_IMODE((out / device_bundle.KEY).stat().st_mode) == 0o600
    assert stat.S_IMODE(out.stat().st_mode) == 0o700

    files = (out / described["ca"], out / described["certificate"], out / described["private_key"])
    device = Client(described["mqtts_port"], made["id"], tls=files)
    assert (await device.connect())[0] == 0
    own = described["own_topic"]
    assert await device.subscribe(f"{own}/#", 1) == 1
    await device.publish(f"{own}/status", b"up", qos=1)
    received = await device.next_message()
    assert (received.topic, received.payload) == (f"{own}/status", b"up")
    await device.publish(f"{root}/sensors/temp", b"21.5", qos=1)  # its scope too
    await device.close()

    example = await asyncio.create_subprocess_exec(
        sys.executable,
        device_bundle.EXAMPLE,
        cwd=out,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(example.communicate(), 60)
    assert example.returncode == 0, stderr.decode()
    assert stdout.decode() == f"received {own}/hello: hello from the bundle\n"

    readme = (out / device_bundle.README).read_text()
    tls = f"-h 127.0.0.1 -p {config.mqtt_tls_port} --cafile ca.pem --cert device.crt"
    assert f"mosquitto_sub {tls} --key device.key -i {made['id']} -t '{own}/#'" in readme
    assert f"mosquitto_pub {tls} --key device.key -i {made['id']} -t '{own}/hello'" in readme
    assert f"-p {config.mqtt_port} -i {made['id']} -u {made['id']} -P" in readme


async def test_the_certificate_before_the_bundle_is_refused_and_the_reset_audited(
    world: World, config: Config, tmp_path: Path
) -> None:
    made = await new_device(world)
    (tmp_path / "old.crt").write_text(made["certificate"])
    (tmp_path / "old.key").write_text(made["private_key"])
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(world.site.services.site_ca.pem)
    code, _, err = await asyncio.to_thread(bundle, config, made["id"], tmp_path / "b")
    assert code == 0, err
    old = Client(
        config.mqtt_tls_port, made["id"], tls=(ca_file, tmp_path / "old.crt", tmp_path / "old.key")
    )
    assert (await old.connect())[0] == 5  # not authorized: the bundle replaced it
    conn = apsw.Connection(str(layout.database_path(config.data_dir)))
    try:
        events = conn.execute(
            "SELECT action, actor_kind, actor_id FROM audit_events WHERE target_id = ?",
            (made["id"],),
        ).fetchall()
    finally:
        conn.close()
    assert ("device_certificate_reset", "operator", None) in events


def test_refusals_change_nothing(data_dir: Path, config: Config, tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "something").write_text("x")
    code, _, err = bundle(config, "nosuchdevice0000", tmp_path / "new")
    assert code == 1 and err.count("\n") == 1 and "nosuchdevice0000" in err
    assert not (tmp_path / "new").exists()
    code, _, err = bundle(config, "nosuchdevice0000", busy)
    assert code == 1 and "not an empty folder" in err
    assert os.listdir(busy) == ["something"]
    off = make_config(data_dir, mqtt_tls_port=0)
    code, _, err = bundle(off, "nosuchdevice0000", tmp_path / "off")
    assert code == 1 and "mqtt_tls_port" in err and not (tmp_path / "off").exists()
