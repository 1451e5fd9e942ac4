"""`edge serve` tells systemd it is ready (edge.service is Type=notify) once it listens:
`systemctl restart` then waits for a migrated, listening server, and the package's upgrade
keeps the previous executable until that restart has succeeded."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.ports import free_port

STARTUP_SECONDS = 60  # an upper bound on a loaded machine, not a speed claim


@pytest.mark.slow
@pytest.mark.parametrize("abstract", [False, True], ids=["path", "abstract"])
def test_serve_says_ready_once_it_answers(tmp_path: Path, abstract: bool) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        name = f"@edge-test-{os.getpid()}-{free_port()}" if abstract else str(tmp_path / "notify")
        listener.bind("\0" + name[1:] if abstract else name)
        listener.settimeout(STARTUP_SECONDS)
        port = free_port()
        command = [sys.executable, "-m", "edge", "serve", "--data-dir", str(tmp_path / "data")]
        command += ["--port", str(port), "--mqtt-port", "0", "--mqtt-tls-port", "0"]
        command += ["--mqtt-ws-port", "0", "--mqtt-wss-port", "0"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
        process = subprocess.Popen(
            command, env={**env, "NOTIFY_SOCKET": name}, stdout=subprocess.DEVNULL
        )
        try:
            assert listener.recv(64) == b"READY=1"
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health", timeout=10) as r:
                assert r.status == 200  # ready means answering, at once
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
