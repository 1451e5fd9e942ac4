"""`edge admin ...` as a process beside a RUNNING `edge serve` on the same data folder: a user
the command line creates signs in over HTTP and is in GET /v2/users; its audit event is the
one an HTTP create writes, with the operator as actor; a suspension on the command line
ends the user's session on the server at once, and a resumption lets them back in."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_serve_process import PASSWORD, Reply, Server, _send, _start, servers  # noqa: F401

WORKER_PASSWORD = "worker-password-on-stdin"


def edge_admin(data_dir: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "edge", "admin", *argv, "--data-dir", str(data_dir)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60, env=env)


def call(server: Server, method: str, path: str, token: str | None = None, **form: str) -> Reply:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = urllib.parse.urlencode(form).encode() if form else None
    request = urllib.request.Request(server.base + path, data, headers, method=method)
    return _send(request)


def call_json(server: Server, method: str, path: str, token: str, body: Any) -> Reply:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    data = json.dumps(body).encode()
    return _send(urllib.request.Request(server.base + path, data, headers, method=method))


def token(server: Server, username: str, password: str, **form: str) -> str:
    reply = call(
        server, "POST", "/v2/auth/token", grant_type="password", username=username,
        password=password, **form,
    )  # fmt: skip
    assert reply.status == 201, reply.text
    return str(json.loads(reply.text)["access_token"])


@pytest.mark.slow
def test_the_command_line_beside_a_running_server(tmp_path: Path, servers: list[Server]) -> None:  # noqa: F811
    server = _start(tmp_path / "data", PASSWORD, "admin")
    servers.append(server)
    data_dir = server.data_dir
    made = edge_admin(data_dir, "orgs", "create", "Plant", "--alias", "plant", "--json")
    assert made.returncode == 0, made.stderr
    org_id = json.loads(made.stdout)["org"]["id"]

    created = edge_admin(
        data_dir, "users", "create", "worker@plant.test", "--username", "worker",
        "--org", "plant", "--json", stdin=WORKER_PASSWORD + "\n",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    worker_id = json.loads(created.stdout)["user"]["id"]
    assert WORKER_PASSWORD not in created.stdout + created.stderr

    worker = token(server, "worker", WORKER_PASSWORD, client_id="plant")  # signs in over HTTP
    assert call(server, "GET", f"/v2/users/{worker_id}", worker).status == 200
    staff = token(server, "admin", PASSWORD, scope=org_id)
    listed = json.loads(call(server, "GET", "/v2/users", staff).text)
    assert worker_id in [user["id"] for user in listed["users"]]

    body = {"email": "clerk@plant.test", "username": "clerk", "password": WORKER_PASSWORD}
    over_http = call_json(server, "POST", "/v2/users", staff, body)
    assert over_http.status == 201, over_http.text
    clerk_id = json.loads(over_http.text)["user"]["id"]
    events = json.loads(call(server, "GET", "/v2/audit?action=user_created", staff).text)
    by_target = {e["target_id"]: e for e in events["audit_events"]}
    ours, theirs = by_target[worker_id], by_target[clerk_id]
    assert theirs["actor_kind"] == "staff" and theirs["actor_id"]
    assert ours["actor_kind"] == "operator" and "actor_id" not in ours
    for name in ("action", "org_id", "target_kind", "details"):
        assert ours[name] == theirs[name], name

    suspended = edge_admin(data_dir, "users", "suspend", "worker", "--org", "plant")
    assert suspended.returncode == 0, suspended.stderr
    assert call(server, "GET", f"/v2/users/{worker_id}", worker).status == 401  # at once
    assert edge_admin(data_dir, "users", "resume", "worker", "--org", "plant").returncode == 0
    worker = token(server, "worker", WORKER_PASSWORD, client_id="plant")
    assert call(server, "GET", f"/v2/users/{worker_id}", worker).status == 200
    assert server.stop(signal.SIGTERM) == 0
