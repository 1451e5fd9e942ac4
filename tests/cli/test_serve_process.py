"""`edge serve` as a real process: bind a free loopback port, answer, stop cleanly on a signal."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import apsw
import pytest

from tests.ports import free_port

STARTUP_SECONDS = 60.0  # an upper bound on a loaded machine, not a speed claim
SHUTDOWN_TIMEOUT = 2  # the server's grace for requests in flight
EXIT_SECONDS = 60.0  # for the process to end once signalled: a bound, not a speed claim
PASSWORD = "process-test-password"
EMAIL = "ops@example.test"


@dataclass
class Reply:
    status: int
    content_type: str
    headers: dict[str, str]
    text: str

    def json(self) -> object:
        return json.loads(self.text)


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    base: str
    data_dir: Path
    stdout: Path
    stderr: Path
    mqtt: dict[str, int]

    def get(self, path: str) -> Reply:
        return _send(urllib.request.Request(self.base + path))

    def sign_in(self, password: str) -> Reply:
        form = {"grant_type": "password", "username": "admin", "password": password}
        data = urllib.parse.urlencode(form).encode()
        return _send(urllib.request.Request(self.base + "/v2/auth/token", data=data))

    def stop(self, sig: signal.Signals) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=EXIT_SECONDS)

    def output(self) -> str:
        return self.stdout.read_text()


def _send(request: urllib.request.Request) -> Reply:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return _reply(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return _reply(error.code, error.headers, error.read())


def _reply(status: int, headers: object, body: bytes) -> Reply:
    flat = dict(headers.items())  # type: ignore[attr-defined]
    content_type = flat.get("Content-Type", "").split(";")[0]
    return Reply(status, content_type, flat, body.decode())


def _environment(password: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    env["EDGE_ADMIN_EMAIL"] = EMAIL
    if password is not None:
        env["EDGE_ADMIN_PASSWORD"] = password
    return env


def _start(
    data_dir: Path,
    password: str | None,
    name: str,
    *extra: str,
    settings: dict[str, str] | None = None,
) -> Server:
    port = free_port()
    stdout, stderr = data_dir.parent / f"{name}.out", data_dir.parent / f"{name}.err"
    names = ("mqtt", "mqtt-tls", "mqtt-ws", "mqtt-wss")
    mqtt = {name: free_port() for name in names}
    command = [sys.executable, "-m", "edge", "serve", "--data-dir", str(data_dir)]
    command += ["--port", str(port), "--shutdown-timeout", str(SHUTDOWN_TIMEOUT)]
    command += [arg for name, number in mqtt.items() for arg in (f"--{name}-port", str(number))]
    command += extra
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            command,
            stdout=out,
            stderr=err,
            env={**_environment(password), **(settings or {})},
            cwd=data_dir.parent,
        )
    server = Server(process, f"http://127.0.0.1:{port}", data_dir, stdout, stderr, mqtt)
    _wait_healthy(server)
    return server


def _wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"edge serve exited early: {server.stderr.read_text()}")
        try:
            if server.get("/v2/health").status == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    server.process.kill()
    pytest.fail(f"edge serve was not healthy within {STARTUP_SECONDS}s")


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    """Every started process, killed at the end if a failing test left it running."""
    started: list[Server] = []
    yield started
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def _mqtt_connack(port: int) -> int:
    """The CONNACK return code for an MQTT 3.1.1 CONNECT with a user name and password."""
    body = b"\x00\x04MQTT\x04\xc2\x00\x1e" + b"\x00\x01c" + b"\x00\x01u" + b"\x00\x01p"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(bytes((0x10, len(body))) + body)
        reply = sock.recv(4)
    assert reply[:2] == b"\x20\x02", reply
    return reply[3]


def _assert_closed_cleanly(data_dir: Path) -> None:
    wal = data_dir / "edge.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    conn = apsw.Connection(str(data_dir / "edge.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) >= 1 FROM sessions").fetchall() == [(1,)]
    finally:
        conn.close()


@pytest.mark.slow
def test_serve_answers_over_http_and_stops_cleanly_on_sigterm(
    tmp_path: Path, servers: list[Server]
) -> None:
    server = _start(tmp_path / "data", PASSWORD, "given")
    servers.append(server)
    health = server.get("/v2/health").json()
    assert isinstance(health, dict) and health["status"] == "ok" and health["writer"] == "ok"
    assert server.get("/v2/health/ready").status == 200
    assert server.get("/v2/version").json() == {"version": "2.3.18", "server_version": "0.1.0"}
    docs = server.get("/v2/docs")
    assert (docs.status, docs.content_type) == (200, "text/html")
    assert "Content-Security-Policy" in docs.headers and "/v2/changelog" in docs.text
    script = server.get("/v2/docs/assets/swagger-ui-bundle.js")
    assert (script.status, script.content_type) == (200, "text/javascript")
    console = server.get("/console/")  # the executable's own files, with its strict policy
    assert (console.status, console.content_type) == (200, "text/html")
    assert "frame-ancestors 'none'" in console.headers["Content-Security-Policy"]
    changelog = server.get("/v2/changelog")
    assert changelog.content_type == "text/html" and "2.3.18" in changelog.text
    security = server.get("/.well-known/security.txt")
    assert security.content_type == "text/plain"
    assert f"Canonical: {server.base}/.well-known/security.txt" in security.text
    assert f"Contact: mailto:{EMAIL}" in security.text
    assert _mqtt_connack(server.mqtt["mqtt"]) == 4  # the broker answers: no such device
    assert server.sign_in(PASSWORD).status == 201  # a durable write: the WAL now holds it
    assert (server.data_dir / "edge.db-wal").stat().st_size > 0
    assert server.stop(signal.SIGTERM) == 0
    output = server.output()
    assert f"{server.base}/v2/docs" in output
    first_url = next(line for line in output.splitlines() if "://" in line)
    assert first_url.split() == ["console:", f"{server.base}/console/"]  # the first link
    schemes = (("mqtt", "mqtt"), ("mqtt-tls", "mqtts"), ("mqtt-ws", "ws"), ("mqtt-wss", "wss"))
    for name, scheme in schemes:
        assert f"{scheme}://127.0.0.1:{server.mqtt[name]}" in output
    assert "password:" not in output  # the operator gave it: never echoed
    assert "stopped cleanly" in server.stderr.read_text()
    _assert_closed_cleanly(server.data_dir)


@pytest.mark.slow
def test_generated_password_is_shown_once_and_sigint_stops_cleanly(
    tmp_path: Path, servers: list[Server]
) -> None:
    data_dir = tmp_path / "data"
    first = _start(data_dir, None, "first")
    servers.append(first)
    shown = re.findall(r"password: (\S+)", first.output())
    assert len(shown) == 1, first.output()
    assert first.sign_in(shown[0]).status == 201
    assert first.stop(signal.SIGINT) == 0
    credentials = data_dir / "initial-admin.txt"
    assert credentials.stat().st_mode & 0o777 == 0o600
    assert f"password: {shown[0]}" in credentials.read_text()
    _assert_closed_cleanly(data_dir)

    second = _start(data_dir, None, "second")
    servers.append(second)
    assert second.sign_in(shown[0]).status == 201
    assert second.stop(signal.SIGTERM) == 0
    assert "password:" not in second.output() and shown[0] not in second.output()
    assert f"password: {shown[0]}" in credentials.read_text()
    _assert_closed_cleanly(data_dir)


@pytest.mark.slow
def test_json_logs_make_the_banner_json_and_keep_the_password_off_standard_output(
    tmp_path: Path, servers: list[Server]
) -> None:
    """A journal reads standard output: every banner line is a JSON object, the generated
    password is only in initial-admin.txt, and each URL printed is one the server answers
    (not the https:// public URL of a site that serves plain HTTP: that is a warning)."""
    data_dir = tmp_path / "data"
    public = "https://edge.plant.test:9443"
    server = _start(data_dir, None, "json", "--log-format", "json", "--public-url", public)
    servers.append(server)
    assert server.stop(signal.SIGTERM) == 0
    lines = [json.loads(line) for line in server.output().splitlines()]
    assert lines and all(line["logger"] == "edge.banner" for line in lines)
    password = re.search(r"password: (\S+)", (data_dir / "initial-admin.txt").read_text())
    assert password is not None and password[1] not in server.output()
    [first] = [line for line in lines if "staff account" in line["message"]]
    assert first["password_file"] == str((data_dir / "initial-admin.txt").resolve())
    [listening] = [line for line in lines if line["message"] == "listening"]
    assert (
        listening["api"] == f"{server.base}/v2"
        and listening["health"] == f"{server.base}/v2/health"
    )
    assert public not in server.output()
    warnings = [json.loads(line) for line in server.stderr.read_text().splitlines()]
    assert any(w["level"] == "warning" and public in w["message"] for w in warnings)


def _reports(data_dir: Path, count: int) -> list[Path]:
    """The memory reports in the data folder, once there are `count` of them."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        found = sorted((data_dir / "diagnostics").glob("memory-*.txt"))
        if len(found) >= count:
            return found
        time.sleep(0.1)
    pytest.fail(f"fewer than {count} memory reports within {STARTUP_SECONDS}s")


@pytest.mark.slow
def test_sigusr2_writes_a_memory_report_and_the_server_serves_on(
    tmp_path: Path, servers: list[Server]
) -> None:
    settings = {"EDGE_MEMORY_TRACE_FRAMES": "4"}
    server = _start(tmp_path / "data", PASSWORD, "traced", settings=settings)
    servers.append(server)
    server.process.send_signal(signal.SIGUSR2)
    _reports(server.data_dir, 1)
    assert server.sign_in(PASSWORD).status == 201
    server.process.send_signal(signal.SIGUSR2)
    first, second = _reports(server.data_dir, 2)
    assert "Python (traced)" in first.read_text() and "The first report" in first.read_text()
    text = second.read_text()
    assert "RSS " in text and "SQLite " in text and "Since the last report:" in text
    assert re.search(r'File ".*/(edge|api|storage)/', text), text  # the server's own code
    assert server.get("/v2/health").status == 200
    assert server.stop(signal.SIGTERM) == 0
    assert f"memory report written to {second}" in server.stderr.read_text()


@pytest.mark.slow
def test_without_tracing_sigusr2_still_writes_the_figures(
    tmp_path: Path, servers: list[Server]
) -> None:
    server = _start(tmp_path / "data", PASSWORD, "untraced")
    servers.append(server)
    server.process.send_signal(signal.SIGUSR2)
    (report,) = _reports(server.data_dir, 1)
    text = report.read_text()
    assert "RSS " in text and "SQLite " in text and "File " not in text
    assert server.stop(signal.SIGTERM) == 0
