"""The single-file executable, built once per test run, proven the way operators run it:
a minimal environment, another working directory, no Python or source tree on its path.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import paho.mqtt.client as paho
import pyotp
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "binary-staff-pass"
# Building the executable takes a minute or two on an idle box, longer on a busy one: the
# suite-wide 120 s limit would stop the build (which has its own 900 s limit) half-way.
# The build alone was a sixth of `make test`'s time, so these run in `make test-long`
# (docs/testing.md): what they alone catch is the packaging (a module or data file the
# executable leaves out), which a change to packaging/ or to imports can break.
pytestmark = [pytest.mark.long, pytest.mark.timeout(900)]


@pytest.fixture(scope="session")
def executable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("build")
    env = {**os.environ, "DISTPATH": str(out / "dist"), "WORKPATH": str(out / "work")}
    subprocess.run(
        ["bash", str(ROOT / "packaging" / "build.sh")],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=900,
    )
    built = out / "dist" / "edge"
    assert built.is_file() and os.access(built, os.X_OK)
    return built


def minimal_env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **extra}


def run(executable: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(executable), *args],
        cwd=cwd,
        env=minimal_env(cwd),
        capture_output=True,
        text=True,
        timeout=120,
    )


def request(
    url: str,
    data: dict[str, str] | None = None,
    token: str | None = None,
    body: dict[str, object] | None = None,
    method: str | None = None,
) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    payload = None
    if data is not None:
        payload = urllib.parse.urlencode(data).encode()
    elif body is not None:
        payload, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    req = urllib.request.Request(url, data=payload, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_version_and_runtime_selftest(executable: Path, tmp_path: Path) -> None:
    version = run(executable, tmp_path, "version")
    assert version.returncode == 0 and "2.3.18" in version.stdout
    selftest = run(executable, tmp_path, "selftest")
    assert selftest.returncode == 0, selftest.stdout + selftest.stderr
    for part in ("sqlite", "crypto", "argon2", "pillow", "otp", "regex", "broker"):
        assert f"ok    {part}" in selftest.stdout


@pytest.fixture
def served(executable: Path, tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str], Path]]:
    port, data = free_port(), tmp_path / "site"
    mqtt = [f"--mqtt-port={free_port()}", f"--mqtt-tls-port={free_port()}"]
    mqtt += ["--mqtt-ws-port=0", "--mqtt-wss-port=0"]
    process = subprocess.Popen(
        [str(executable), "serve", "--data-dir", str(data), "--port", str(port), *mqtt],
        cwd=tmp_path,
        env=minimal_env(tmp_path, EDGE_ADMIN_PASSWORD=PASSWORD),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if request(f"{base}/v2/health")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        pytest.fail("the executable never became healthy: " + process.communicate()[1])
    yield base, process, data
    if process.poll() is None:
        process.kill()
    process.communicate(timeout=30)  # reap it and close its pipes


def test_serves_the_interface_and_stops_cleanly(
    served: tuple[str, subprocess.Popen[str], Path], tmp_path: Path
) -> None:
    base, process, data = served
    assert json.loads(request(f"{base}/v2/version")[1])["version"] == "2.3.18"
    status, page = request(f"{base}/v2/docs")
    assert status == 200 and b"/v2/docs/assets/swagger-ui-bundle.js" in page
    status, asset = request(f"{base}/v2/docs/assets/swagger-ui-bundle.js")
    assert status == 200 and len(asset) > 100_000
    status, page = request(f"{base}/console/")  # the console's files are packed too
    assert status == 200 and b"/console/js/main.js" in page
    for name in ("js/pages/users.js", "vendor/qrcode-generator-2.0.4/qrcode.mjs"):
        assert request(f"{base}/console/{name}")[0] == 200, name
    status, page = request(f"{base}/v2/changelog")
    assert status == 200 and b"copy-before-migrate upgrades" in page  # CHANGELOG.md is packed
    assert b"Contact:" in request(f"{base}/.well-known/security.txt")[1]
    status, reply = request(
        f"{base}/v2/auth/token",
        {"grant_type": "password", "username": "admin", "password": PASSWORD},
    )
    assert status == 201
    token = json.loads(reply)["access_token"]
    status, reply = request(f"{base}/v2/orgs", token=token, body={"name": "Binary Org"})
    assert status == 201
    identity_round_trip(base, token)
    mqtt_round_trip(base, process, data, tmp_path)
    files_round_trip(base)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    wal = data / "edge.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0


def port_of(process: subprocess.Popen[str], flag: str) -> int:
    args = cast(list[str], process.args)
    return int(next(a.split("=")[1] for a in args if a.startswith(f"--{flag}=")))


def mqtt_round_trip(base: str, process: subprocess.Popen[str], data: Path, folder: Path) -> None:
    """The org admin creates a device over HTTP; the device connects over MQTT/TLS with the
    client certificate it was issued and receives what it publishes, and a message its API
    key publishes over plain MQTT; a stranger's password is refused with CONNACK 4."""
    admin = sign_in(base, "boss@smoke.test", "boss-password-1", "smoke")
    scopes = {"/sensors": {"can_publish": True, "can_subscribe": True}}
    body: dict[str, object] = {"name": "pump", "iot_scopes": scopes}
    device = cast(dict[str, Any], created(base, "/v2/devices", admin, body)["device"])
    cert_file, key_file = folder / "device.pem", folder / "device.key"
    cert_file.write_text(device["certificate"])
    key_file.write_text(device["private_key"])
    ca_file = data / "ca" / "ca.pem"
    status, pem = request(str(device["root_ca"]))
    assert status == 200 and pem == ca_file.read_bytes()  # the root_ca URL serves the site CA
    topic = f"{device['root_scope']}/sensors/temp"
    tls_port, tcp_port = port_of(process, "mqtt-tls-port"), port_of(process, "mqtt-port")
    received: queue.Queue[tuple[str, bytes, int]] = queue.Queue()
    listener = mqtt_client("over-tls", received)
    listener.tls_set(ca_certs=str(ca_file), certfile=str(cert_file), keyfile=str(key_file))
    listener.connect("127.0.0.1", tls_port, 30)
    listener.loop_start()
    try:
        assert received.get(timeout=15) == ("connack", b"", 0)
        _, mid = listener.subscribe(topic, 1)
        assert received.get(timeout=15) == ("suback", b"", 1)
        listener.publish(topic, b"21.5", 1).wait_for_publish(15)
        assert received.get(timeout=15) == (topic, b"21.5", 1)
        sender = mqtt_client("over-tcp", queue.Queue())
        sender.username_pw_set(str(device["id"]), str(device["api_key"]))
        sender.connect("127.0.0.1", tcp_port, 30)
        sender.loop_start()
        sender.publish(topic, b"from the key", 1).wait_for_publish(15)
        sender.disconnect()
        sender.loop_stop()
        assert received.get(timeout=15) == (topic, b"from the key", 1)
    finally:
        listener.disconnect()
        listener.loop_stop()
    assert mqtt_tls_connack(tls_port, ca_file) == 4  # a user name and password of nobody


def mqtt_client(client_id: str, received: queue.Queue[tuple[str, bytes, int]]) -> paho.Client:
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv311)
    client.on_connect = lambda c, u, f, code, p: received.put(("connack", b"", code.value))
    client.on_subscribe = lambda c, u, mid, codes, p: received.put(("suback", b"", codes[0].value))
    client.on_message = lambda c, u, m: received.put((m.topic, bytes(m.payload), m.qos))
    return client


def mqtt_tls_connack(port: int, ca_file: Path) -> int:
    """The CONNACK code of an MQTT CONNECT over TLS, the server certificate checked against
    the site CA."""
    context = ssl.create_default_context(cafile=str(ca_file))
    body = b"\x00\x04MQTT\x04\xc2\x00\x1e" + b"\x00\x01c" + b"\x00\x01u" + b"\x00\x01p"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
            sock.sendall(bytes((0x10, len(body))) + body)
            reply = sock.recv(4)
    assert reply[:2] == b"\x20\x02", reply
    return reply[3]


def created(base: str, path: str, token: str, body: dict[str, object]) -> dict[str, object]:
    status, reply = request(f"{base}{path}", token=token, body=body)
    assert status == 201, (path, status, reply)
    return dict(json.loads(reply or b"{}"))


def sign_in(base: str, username: str, password: str, client_id: str) -> str:
    form = {
        "grant_type": "password",
        "username": username,
        "password": password,
        "client_id": client_id,
    }
    status, reply = request(f"{base}/v2/auth/token", form)
    assert status == 201, reply
    return str(json.loads(reply)["access_token"])


def identity_round_trip(base: str, staff: str) -> None:
    """An org and its admin; the admin makes a project, a group, a role and a user who
    holds the role and group access; both sign in and the user reads the group."""
    status, _ = request(f"{base}/v2/orgs", token=staff, body={"name": "Smoke", "alias": "smoke"})
    assert status == 201
    scoped = json.loads(
        request(
            f"{base}/v2/auth/token",
            {"grant_type": "password", "username": "admin", "password": PASSWORD, "scope": "smoke"},
        )[1]
    )
    admin_body = {
        "email": "boss@smoke.test",
        "password": "boss-password-1",
        "org_permissions": {"is_admin": True},
    }
    created(base, "/v2/users", scoped["access_token"], admin_body)
    admin = sign_in(base, "boss@smoke.test", "boss-password-1", "smoke")
    project = created(base, "/v2/projects", admin, {"name": "Ward"})["project"]
    group = created(
        base, "/v2/groups", admin, {"name": "Night shift", "project_id": project["id"]}
    )["group"]
    role = created(base, "/v2/roles", admin, {"name": "Nurse"})["role"]
    user = created(
        base, "/v2/users", admin, {"email": "nurse@smoke.test", "password": "nurse-password-1"}
    )["user"]
    created(base, f"/v2/roles/{role['id']}/access/{user['id']}", admin, {"can_read": True})
    created(base, f"/v2/groups/{group['id']}/access/{user['id']}", admin, {"can_read": True})
    nurse = sign_in(base, "nurse@smoke.test", "nurse-password-1", "smoke")
    status, reply = request(f"{base}/v2/groups/{group['id']}", token=nurse)
    assert status == 200 and json.loads(reply)["group"]["name"] == "Night shift"
    status, _ = request(f"{base}/v2/orgs", token=nurse)
    assert status == 403
    totp_round_trip(base, nurse)


def files_round_trip(base: str) -> None:
    """The org admin uploads a file through its presigned URL and downloads it again."""
    admin = sign_in(base, "boss@smoke.test", "boss-password-1", "smoke")
    group = created(base, "/v2/groups", admin, {"name": "Scans"})["group"]
    where = f"{base}/v2/groups/{group['id']}/files/scans/one.bin"
    status, reply = request(where, token=admin, body={"content_type": "image/png"}, method="PUT")
    assert status == 200, reply
    data = os.urandom(300_000)
    upload = urllib.request.Request(json.loads(reply)["url"], data=data, method="PUT")
    with urllib.request.urlopen(upload, timeout=10) as response:
        assert response.headers["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'
    status, reply = request(where, token=admin)
    assert status == 200, reply
    found = json.loads(reply)
    assert found["file"]["etag"] == hashlib.md5(data).hexdigest()
    with urllib.request.urlopen(found["url"], timeout=10) as response:
        assert response.read() == data and response.headers["Content-Type"] == "image/png"


def totp_round_trip(base: str, nurse: str) -> None:
    """The user turns on software MFA, then signs in again answering the TOTP challenge.

    The set-up is confirmed with the previous time step's code (accepted for clock drift):
    a code works once, so the current one is kept for signing in."""
    status, reply = request(f"{base}/v2/auth/mfa/secret-code", token=nurse)
    assert status == 200
    totp = pyotp.TOTP(json.loads(reply)["secret_code"])
    status, reply = request(
        f"{base}/v2/auth/mfa/software",
        {"mfa_code": totp.at(time.time() - 30), "client_id": "smoke"},
        token=nurse,
        method="PUT",
    )
    assert status == 200 and json.loads(reply)["recovery_code"]
    form = {
        "grant_type": "password",
        "username": "nurse@smoke.test",
        "password": "nurse-password-1",
        "client_id": "smoke",
    }
    status, reply = request(f"{base}/v2/auth/token", form)
    challenge = json.loads(reply)
    assert status == 200 and challenge["challenge"] == "SOFTWARE_TOKEN_MFA"
    answer = {
        "client_id": "smoke",
        "challenge": "SOFTWARE_TOKEN_MFA",
        "mfa_code": totp.now(),
        "username": "nurse@smoke.test",
    }
    status, reply = request(f"{base}/v2/auth/challenge", answer, token=challenge["session"])
    assert status == 201 and json.loads(reply)["access_token"]


def test_the_device_agent_runs_from_the_executable(executable: Path, tmp_path: Path) -> None:
    """`edge agent` is in the executable with its MQTT client: with no broker to reach it
    says so, tries again, and stops cleanly on SIGTERM; a bad configuration is one line."""
    key = tmp_path / "key"
    key.write_text("edk_x\n")
    key.chmod(0o600)
    config = {
        "server": f"http://127.0.0.1:{free_port()}",
        "mqtt": f"mqtt://127.0.0.1:{free_port()}",  # nothing listens there
        "device_id": "dev1",
        "root_scope": "org1",
        "state_dir": "state",
        "credentials": {"api_key_file": "key"},
        "reconnect": {"min_seconds": 0.1, "max_seconds": 0.2},
        "commands": {"handler": ["/bin/true"]},
    }
    (tmp_path / "agent.json").write_text(json.dumps({**config, "extra": 1}))
    refused = run(executable, tmp_path, "agent", "--config", "agent.json")
    assert (refused.returncode, refused.stderr) == (
        2,
        "edge agent: extra: not a setting of the agent\n",
    )
    (tmp_path / "agent.json").write_text(json.dumps(config))
    process = subprocess.Popen(
        [str(executable), "agent", "--config", "agent.json"],
        cwd=tmp_path,
        env=minimal_env(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    assert "cannot reach the MQTT broker" in process.stderr.readline()
    assert "cannot reach the MQTT broker" in process.stderr.readline()  # it tries again
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)  # reap it and close its pipe
    assert process.returncode == 0
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
