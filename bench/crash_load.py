"""The write storm of the crash test (bench/crash.py), run as its own process.

Threads write through HTTP while another publishes retained MQTT messages and twin reports
at QoS 1 (the device's twin's `desired` and rollout jobs are among the HTTP writes), each
write under a name used once, whose content follows from the name (`content`, `value_of`),
so the checker can tell a whole write from a half one without knowing what was sent. A write
goes into the journal (one JSON line, flushed) only once the server acknowledged it: a 2xx
reply, or a PUBACK. A write cut short by a kill has no line, whether or not it committed.

Usage: python -m bench.crash_load <settings.json> (written by bench/crash.py); SIGTERM ends
it after the writes in flight.
"""

from __future__ import annotations

import hashlib
import json
import random
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

TIMEOUT = 10.0
DOWN_PAUSE = 0.05  # between attempts while the server is down
PART = 4096  # the smallest part, as bench/crash.py configures the server
BULK_PATHS = 5


class Unanswered(Exception):
    """No answer (the server died, or was not up yet): the write may or may not have landed."""


class Refused(Unanswered):
    """An error status: never expected from this storm (its names are fresh, its bodies
    valid), so the checker reports every one."""


def content(name: str, size: int) -> bytes:
    """The bytes of a file (or part) named `name`: any reader can recompute them."""
    return hashlib.shake_256(name.encode()).digest(size)


def value_of(path: str) -> dict[str, str]:
    """The value written at a data path (bulk paths: the value of their job)."""
    if path.startswith("/b/"):
        return {"bulk": path.split("/")[2]}
    return {"path": path}


def file_bytes(path: str) -> bytes:
    """The whole content of a file the storm uploads, from its path alone:
    `/s/<id>-<size>.bin` (one PUT) or `/m/<id>-<size1>-<size2>.bin` (two parts)."""
    stem = path.rsplit("/", 1)[1].removesuffix(".bin")
    sizes = [int(s) for s in stem.split("-")[2:]]
    if path.startswith("/s/"):
        return content(path, sizes[0])
    return b"".join(content(f"{path}:{n}", size) for n, size in enumerate(sizes, 1))


class Journal:
    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def add(self, **entry: Any) -> None:
        line = json.dumps(entry) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        self._file.close()


class Http:
    """JSON calls with the organization admin's token (signed in again on a 401)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.base = settings["base"]
        self._form = {
            "grant_type": "password",
            "username": "admin",
            "password": settings["password"],
            "scope": settings["org"],
        }
        self._token = settings["token"]

    def call(self, method: str, path: str, body: Any = None) -> Any:
        status, reply = self.send(method, path, body)
        if status == 401:
            self._token = self._sign_in()
            status, reply = self.send(method, path, body)
        if status >= 300:
            raise Refused(f"{method} {path}: {status} {reply}")
        return reply

    def send(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {token or self._token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        return request(urllib.request.Request(self.base + path, data, headers, method=method))

    def _sign_in(self) -> str:
        data = urllib.parse.urlencode(self._form).encode()
        status, reply = request(urllib.request.Request(self.base + "/v2/auth/token", data))
        if status != 201:
            raise Unanswered(f"sign-in: {status}")
        return str(reply["access_token"])


def request(req: urllib.request.Request) -> tuple[int, Any]:
    """(status, JSON body); Unanswered when no reply came."""
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw or b"null")
        except ValueError:
            return error.code, raw.decode(errors="replace")
    except (OSError, ValueError) as exc:  # refused, reset, timed out, a torn reply
        raise Unanswered(str(exc)) from None


def put_bytes(url: str, data: bytes) -> str:
    """The bytes of an upload or a part; returns the ETag."""
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data, method="PUT"), timeout=TIMEOUT
        ) as reply:
            return str(reply.headers["ETag"])
    except urllib.error.HTTPError as error:
        raise Refused(f"PUT bytes: {error.code} {error.read()!r}") from None
    except OSError as exc:
        raise Unanswered(str(exc)) from None


class Writer:
    """One thread of the storm: a random mix of writes, each under a fresh name."""

    def __init__(self, number: int, settings: dict[str, Any], journal: Journal) -> None:
        self.http = Http(settings)
        self.group = settings["group"]
        self.twin_device = settings["mqtt_device"]
        self.journal = journal
        self.random = random.Random(settings["seed"] * 1000 + number)
        self.prefix = f"t{number}"
        self.count = 0
        self.devices: list[str] = []  # this thread's devices: only it resets their keys
        self.ops: list[tuple[Callable[[str], None], int]] = [  # the slowest first
            (self.user, 1),
            (self.data_put, 4),
            (self.data_post, 3),
            (self.bulk, 2),
            (self.file, 3),
            (self.multipart, 2),
            (self.new_group, 1),
            (self.device, 1),
            (self.reset_key, 2),
            (self.twin, 2),
            (self.job, 1),
        ]

    def run(self, stop: threading.Event) -> None:
        ops, weights = zip(*self.ops, strict=True)
        while not stop.is_set():
            self.count += 1
            if self.count <= len(ops):  # one of each kind first, so that every check has work
                op = ops[self.count - 1]
            else:
                op = self.random.choices(ops, weights)[0]
            try:
                op(f"{self.prefix}-{self.count}")
            except Refused as exc:
                self.journal.add(kind="refused", what=str(exc)[:300])
                time.sleep(DOWN_PAUSE)
            except Unanswered:
                time.sleep(DOWN_PAUSE)

    def data_put(self, name: str) -> None:
        path = f"/w/{name}"
        self.http.call("PUT", f"/v2/groups/{self.group}/data{path}", {"value": value_of(path)})
        self.journal.add(kind="data", path=path)

    def data_post(self, name: str) -> None:
        path = f"/p/{name}"
        self.http.call("POST", f"/v2/groups/{self.group}/data{path}", {"value": value_of(path)})
        self.journal.add(kind="data", path=path)

    def bulk(self, name: str) -> None:
        paths = [f"/b/{name}-{BULK_PATHS}/{n}" for n in range(BULK_PATHS)]
        job = {"paths": paths, "value": value_of(paths[0])}
        self.http.call("POST", f"/v2/groups/{self.group}/data", {"method": "PUT", "jobs": [job]})
        self.journal.add(kind="bulk", paths=paths)

    def file(self, name: str) -> None:
        path = f"/s/{name}-{self.random.randint(1, 16384)}.bin"
        reply = self.http.call("PUT", f"/v2/groups/{self.group}/files{path}", {})
        put_bytes(reply["url"], file_bytes(path))
        self.journal.add(kind="file", path=path)

    def multipart(self, name: str) -> None:
        path = f"/m/{name}-{PART}-{self.random.randint(1, PART)}.bin"
        files = f"/v2/groups/{self.group}/files{path}"
        reply = self.http.call("PUT", files, {"num_parts": 2})
        whole = file_bytes(path)
        parts = zip(reply["urls"], (whole[:PART], whole[PART:]), strict=True)
        etags = {str(n): put_bytes(url, part) for n, (url, part) in enumerate(parts, 1)}
        done = {"completed_upload_id": reply["upload_id"], "etag_by_part": etags}
        self.http.call("PUT", files, done)
        self.journal.add(kind="file", path=path)

    def user(self, name: str) -> None:
        body = {"email": f"{name}@crash.example.test", "username": f"crash-{name}"}
        made = self.http.call("POST", "/v2/users", body)
        self.journal.add(kind="user", id=made["user"]["id"])

    def new_group(self, name: str) -> None:
        made = self.http.call("POST", "/v2/groups", {"name": f"crash {name}"})
        self.journal.add(kind="group", id=made["group"]["id"])

    def device(self, name: str) -> None:
        made = self.http.call("POST", "/v2/devices", {"name": f"crash-{name}"})["device"]
        self.devices.append(made["id"])
        self.journal.add(kind="device", id=made["id"], key=made["api_key"])

    def reset_key(self, name: str) -> None:
        if not self.devices:
            return self.device(name)
        device = self.random.choice(self.devices)
        self.journal.add(kind="reset-sent", id=device)  # whatever comes of it
        made = self.http.call("POST", f"/v2/devices/{device}/reset-api-key")
        self.journal.add(kind="reset", id=device, key=made["api_key"])

    def job(self, name: str) -> None:
        """A rollout job over this thread's devices (and the publisher), one at a time in
        progress: bench/crash.py checks it is there and that its counts and limits held."""
        targets = [self.twin_device, *self.devices[-3:]]
        body = {
            "description": name,
            "document": {"name": name},
            "targets": {"device_ids": targets},
            "policy": {"max_in_progress": 1, "timeout_seconds": 1, "max_retries": 2},
        }
        made = self.http.call("POST", "/v2/jobs", body)["job"]
        self.journal.add(kind="job", id=made["id"], devices=len(targets))

    def twin(self, name: str) -> None:
        """This thread's key of the device's desired state, set to a count that only grows:
        the twin holds the last acknowledged count or a later one."""
        count = self.count
        body = {"desired": {self.prefix: count}}
        self.http.call("PATCH", f"/v2/devices/{self.twin_device}/twin", body)
        self.journal.add(kind="twin", section="desired", key=self.prefix, value=count)


class Publisher:
    """Retained messages at QoS 1, each on a topic of its own, and every fourth message a
    report of the device's twin (`mqtt`: a count that only grows); journaled on PUBACK."""

    def __init__(self, settings: dict[str, Any], journal: Journal) -> None:
        self.settings = settings
        self.journal = journal
        self.client: paho.Client | None = None
        self.connected = threading.Event()
        self.lost = threading.Event()

    def run(self, stop: threading.Event) -> None:
        count = 0
        while not stop.is_set():
            if self.client is None and not self._connect():
                time.sleep(DOWN_PAUSE)
                continue
            count += 1
            if not self._publish(*self._next(count)):
                self._drop()
        self._drop()

    def _connect(self) -> bool:
        self.connected.clear()
        self.lost.clear()
        client = paho.Client(CallbackAPIVersion.VERSION2, protocol=paho.MQTTv311)
        client.username_pw_set(self.settings["mqtt_device"], self.settings["mqtt_key"])
        client.on_connect = lambda *a: self.connected.set() if not a[3].is_failure else None
        client.on_disconnect = lambda *a: self.lost.set()
        try:
            client.connect("127.0.0.1", self.settings["mqtt_port"], keepalive=10)
        except OSError:
            return False
        client.loop_start()
        self.client = client
        if not self.connected.wait(TIMEOUT):
            self._drop()
            return False
        return True

    def _next(self, count: int) -> tuple[str, bytes, dict[str, Any]]:
        """The topic, payload and journal entry of the count-th message."""
        root, device = self.settings["mqtt_root"], self.settings["mqtt_device"]
        if count % 4 == 0:
            topic = f"{root}/devices/{device}/twin/update"
            entry = {"kind": "twin", "section": "reported", "key": "mqtt", "value": count}
            return topic, json.dumps({"reported": {"mqtt": count}}).encode(), entry
        topic, payload = f"{root}/crash/{count}", f"retained {count}"
        return topic, payload.encode(), {"kind": "retained", "topic": topic, "payload": payload}

    def _publish(self, topic: str, payload: bytes, entry: dict[str, Any]) -> bool:
        assert self.client is not None
        try:
            retain = entry["kind"] == "retained"
            info = self.client.publish(topic, payload, qos=1, retain=retain)
            info.wait_for_publish(TIMEOUT)
        except (RuntimeError, ValueError, OSError):
            return False
        if not info.is_published():
            return False
        self.journal.add(**entry)
        return not self.lost.is_set()

    def _drop(self) -> None:
        if self.client is not None:
            self.client.loop_stop()
            self.client.disconnect()
            self.client = None


def main(argv: list[str]) -> int:
    settings = json.loads(Path(argv[0]).read_text())
    journal = Journal(Path(settings["journal"]))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    workers: list[Any] = [Writer(n, settings, journal) for n in range(settings["threads"])]
    workers.append(Publisher(settings, journal))
    threads = [threading.Thread(target=w.run, args=(stop,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    while not stop.wait(0.2):
        pass
    for thread in threads:
        thread.join(TIMEOUT * 4)
    journal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
