"""The crash test: a real `edge serve` killed (SIGKILL) at random moments under a write
storm, started again each time, then checked.

The storm (bench/crash_load.py, its own process) writes data (PUT, POST, bulk), uploads files
(single and multipart), creates users, groups and devices, resets device API keys and
publishes retained MQTT messages at QoS 1, journaling every write the server acknowledged.
After the last kill the storm stops, the server starts once more, and the checks run:

- every acknowledged write is there (found), or it is counted lost;
- `PRAGMA integrity_check` is ok after every kill (read-only, before the restart) and at the end;
- no blob is missing or orphaned: the blobs on disk are exactly those the index names, and
  every recorded part of an upload in progress is on disk;
- no upload is half-visible: every file the index lists (acknowledged or not) downloads whole,
  every data entry holds its whole value, and a bulk write is there entirely or not at all;
- no replaced API key works again: every key an acknowledged reset replaced is refused;
- retained MQTT messages acknowledged at QoS 1 are still retained;
- every acknowledged twin update is in the device's twin: `desired` set over HTTP and
  `reported` over MQTT at QoS 1 (acknowledged once durable), each a count that only grows,
  so the twin holds the acknowledged count or a later one;
- every acknowledged job is there with an execution per target; for every job, the counts
  per state its triggers keep are the executions' own, and no more executions are released
  and unfinished than its `max_in_progress` (the scheduler, killed mid-tick, released none
  twice).

    python -m bench.crash --kills 100        (make crash-test KILLS=100)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from bench.crash_load import PART, Http, Unanswered, file_bytes, request, value_of

ROOT = Path(__file__).resolve().parent.parent  # the tree under test, whatever is installed
PASSWORD = "crash-test-password-1"
STARTUP_SECONDS = 60.0
KINDS = frozenset(
    {"data", "bulk", "file", "user", "group", "device", "reset", "retained", "twin", "job"}
)
MQTT_PORTS = ("mqtt", "mqtt-tls", "mqtt-ws", "mqtt-wss")


@dataclass
class Settings:
    kills: int = 100
    seed: int = 1
    up_min: float = 0.3  # seconds the server runs under the storm before a kill
    up_max: float = 2.0
    first_up: float = 60.0  # at most, waiting for every kind of write to be acknowledged
    threads: int = 4
    folder: Path | None = None  # default: a temporary folder, removed afterwards


@dataclass
class Report:
    kills: int = 0
    acknowledged: Counter[str] = field(default_factory=Counter)
    found: Counter[str] = field(default_factory=Counter)
    lost: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    restarts: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.lost and not self.violations

    def lines(self) -> list[str]:
        acked, found = sum(self.acknowledged.values()), sum(self.found.values())
        kinds = ", ".join(f"{k} {self.found[k]}/{n}" for k, n in sorted(self.acknowledged.items()))
        slowest = max(self.restarts, default=0.0)
        out = [
            f"kills: {self.kills} in {self.seconds:.0f} s (restart to healthy: slowest "
            f"{slowest:.1f} s)",
            f"acknowledged: {acked}  found: {found}  lost: {acked - found}",
            f"by kind (found/acknowledged): {kinds}",
        ]
        out += [f"LOST {line}" for line in self.lost[:20]]
        out += [f"VIOLATION {line}" for line in self.violations[:20]]
        out.append("verdict: ok" if self.ok else "verdict: FAILED")
        return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Edge:
    """`edge serve` on one data folder and fixed ports, started again after every kill (the
    storm's URLs, presigned ones included, stay valid across restarts)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data_dir = folder / "data"
        self.port = free_port()
        self.mqtt = {name: free_port() for name in MQTT_PORTS}
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> float:
        began = time.monotonic()
        self.starts += 1
        command = [sys.executable, "-m", "edge", "serve", "--data-dir", str(self.data_dir)]
        command += ["--port", str(self.port)]
        command += [a for name, port in self.mqtt.items() for a in (f"--{name}-port", str(port))]
        env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
        env |= {"EDGE_ADMIN_PASSWORD": PASSWORD, "EDGE_FILES_MIN_PART_BYTES": str(PART)}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        log = (self.folder / "edge.log").open("ab")
        self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env, cwd=self.folder)
        log.close()
        self._wait_healthy()
        return time.monotonic() - began

    def _wait_healthy(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"edge serve exited ({self.process.returncode}); see edge.log")
            try:
                status, _ = request(urllib.request.Request(self.base + "/v2/health"))
                if status == 200:
                    return
            except Unanswered:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"edge serve was not healthy within {STARTUP_SECONDS:.0f} s")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)

    @property
    def db(self) -> Path:
        return self.data_dir / "edge.db"


@contextmanager
def read_only(path: Path) -> Iterator[apsw.Connection]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        yield conn
    finally:
        conn.close()


def integrity(path: Path) -> str:
    with read_only(path) as conn:
        rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
    return "ok" if rows == ["ok"] else "; ".join(rows[:5])


def token(base: str, **extra: str) -> str:
    form = {"grant_type": "password", "username": "admin", "password": PASSWORD, **extra}
    req = urllib.request.Request(base + "/v2/auth/token", urllib.parse.urlencode(form).encode())
    status, reply = request(req)
    if status != 201:
        raise RuntimeError(f"sign-in failed: {status} {reply}")
    return str(reply["access_token"])


def prepare(edge: Edge, settings: Settings) -> dict[str, Any]:
    """The organization, group and MQTT device the storm writes to: the storm's settings."""
    staff = {"base": edge.base, "password": PASSWORD, "org": "", "token": token(edge.base)}
    Http(staff).call("POST", "/v2/orgs", {"name": "Crash test", "alias": "crash"})
    admin = {**staff, "org": "crash", "token": token(edge.base, scope="crash")}
    http = Http(admin)
    group = http.call("POST", "/v2/groups", {"name": "storm"})["group"]["id"]
    scopes = {"/crash": {"can_publish": True, "can_subscribe": True}}
    device = http.call("POST", "/v2/devices", {"name": "publisher", "iot_scopes": scopes})
    device = device["device"]
    return {
        **admin,
        "group": group,
        "mqtt_port": edge.mqtt["mqtt"],
        "mqtt_device": device["id"],
        "mqtt_key": device["api_key"],
        "mqtt_root": device["root_scope"],
        "journal": str(edge.folder / "journal.jsonl"),
        "threads": settings.threads,
        "seed": settings.seed,
    }


def start_storm(folder: Path, storm: dict[str, Any]) -> subprocess.Popen[bytes]:
    path = folder / "storm.json"
    path.write_text(json.dumps(storm))
    log = (folder / "storm.log").open("ab")
    command = [sys.executable, "-m", "bench.crash_load", str(path)]
    process = subprocess.Popen(command, stdout=log, stderr=log, cwd=ROOT)
    log.close()
    return process


def run(settings: Settings) -> Report:
    """One run in `settings.folder`, or in a temporary folder removed after a clean run (kept,
    and named on stderr, when anything failed: edge.log, storm.log and the journal are there)."""
    if settings.folder is not None:
        settings.folder.mkdir(parents=True, exist_ok=True)
        return _run_in(settings.folder, settings)
    folder = Path(tempfile.mkdtemp(prefix="edge-crash-"))
    report = None
    try:
        report = _run_in(folder, settings)
    finally:
        if report is not None and report.ok:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            print(f"the run's folder is kept: {folder}", file=sys.stderr)
    return report


def _run_in(folder: Path, settings: Settings) -> Report:
    began, report = time.monotonic(), Report()
    rng = random.Random(settings.seed)
    edge = Edge(folder)
    edge.start()
    storm = prepare(edge, settings)
    load = start_storm(folder, storm)
    try:
        every_kind_acknowledged(Path(storm["journal"]), settings.first_up)
        for _ in range(settings.kills):
            time.sleep(rng.uniform(settings.up_min, settings.up_max))
            if load.poll() is not None:
                raise RuntimeError(f"the storm stopped early ({load.returncode}); see storm.log")
            edge.kill()
            report.kills += 1
            if (verdict := integrity(edge.db)) != "ok":
                report.violations.append(f"integrity after kill {report.kills}: {verdict}")
            if report.kills < settings.kills:
                report.restarts.append(edge.start())
    finally:
        load.send_signal(signal.SIGTERM)
        load.wait(timeout=120)
    report.restarts.append(edge.start())
    check_blobs(edge.data_dir, report)  # before any request: what the restart left
    verify(edge, storm, report)
    if (code := edge.stop()) != 0:
        report.violations.append(f"edge serve exited {code} on SIGTERM")
    if (verdict := integrity(edge.db)) != "ok":
        report.violations.append(f"integrity at the end: {verdict}")
    check_blobs(edge.data_dir, report)
    report.seconds = time.monotonic() - began
    return report


def every_kind_acknowledged(path: Path, at_most: float) -> None:
    """Wait before the first kill until each kind of write was acknowledged once, so that
    every check has something to check, however slow the machine."""
    deadline = time.monotonic() + at_most
    while time.monotonic() < deadline:
        if KINDS <= {entry["kind"] for entry in journal(path)}:
            return
        time.sleep(0.2)
    raise RuntimeError(f"not every kind of write was acknowledged within {at_most:.0f} s")


# -- the checks ------------------------------------------------------------------------------


def check_blobs(data_dir: Path, report: Report) -> None:
    on_disk = {p.name for p in (data_dir / "blobs").glob("*/*") if p.is_file()}
    with read_only(data_dir / "edge.db") as conn:
        indexed = {str(r[0]) for r in conn.execute("SELECT blob FROM file_blobs")}
        parts = [
            (str(u), str(f))
            for u, f in conn.execute("SELECT upload_id, file FROM file_upload_parts")
        ]
        uploads = {str(r[0]) for r in conn.execute("SELECT id FROM file_uploads")}
    for blob in sorted(indexed - on_disk)[:10]:
        report.violations.append(f"blob {blob} is indexed but missing from disk")
    for blob in sorted(on_disk - indexed)[:10]:
        report.violations.append(f"blob {blob} is on disk but no file names it (orphan)")
    for upload, name in parts:
        if not (data_dir / "uploads" / upload / name).is_file():
            report.violations.append(f"part {name} of upload {upload} is recorded but missing")
    folders = {p.name for p in (data_dir / "uploads").glob("*") if p.is_dir()}
    for folder in sorted(folders - uploads)[:10]:
        report.violations.append(f"part folder {folder} belongs to no upload (orphan)")
    if leftovers := list((data_dir / "tmp").glob("*")):
        report.violations.append(f"{len(leftovers)} temporary files left after the start")


def journal(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def verify(edge: Edge, storm: dict[str, Any], report: Report) -> None:
    entries = journal(Path(storm["journal"]))
    http = Http({**storm, "token": token(edge.base, scope="crash")})
    group = storm["group"]
    check_data(http, group, entries, report)
    check_files(http, group, entries, report)
    check_accounts(http, entries, report)
    check_keys(http, entries, report)
    check_retained(edge.db, entries, report)
    check_twin(http, storm["mqtt_device"], entries, report)
    check_jobs(http, edge.db, entries, report)
    for entry in entries:
        if entry["kind"] == "refused":
            report.violations.append(f"the storm was refused: {entry['what']}")


def _pages(http: Http, path: str, key: str) -> Iterator[dict[str, Any]]:
    """Every page of a cascade list (limit 1000), following last_evaluated_key."""
    after: Any = None
    while True:
        query = {"cascade": "true", "limit": "1000"}
        if after is not None:
            query["last_evaluated_key"] = json.dumps(after)
        page = http.call("GET", f"{path}?{urllib.parse.urlencode(query)}")
        yield page
        after = page.get("last_evaluated_key")
        if after is None:
            return


def check_data(http: Http, group: str, entries: list[dict[str, Any]], report: Report) -> None:
    stored = {}
    for page in _pages(http, f"/v2/groups/{group}/data/", "data"):
        stored.update({e["path"]: e["value"] for e in page["data"]})
    for path, value in stored.items():
        if value != value_of(path):
            report.violations.append(f"data {path} holds {value!r}, not what was written")
    bulks: defaultdict[str, int] = defaultdict(int)
    for path in stored:
        if path.startswith("/b/"):
            bulks[path.split("/")[2]] += 1
    for name, count in bulks.items():
        if count != int(name.rsplit("-", 1)[1]):
            report.violations.append(f"bulk write {name} is partly there ({count} paths)")
    for entry in entries:
        if entry["kind"] in ("data", "bulk"):
            paths = entry.get("paths") or [entry["path"]]
            _tally(report, entry["kind"], all(p in stored for p in paths), paths[0])


def check_files(http: Http, group: str, entries: list[dict[str, Any]], report: Report) -> None:
    listed: set[str] = set()
    for page in _pages(http, f"/v2/groups/{group}/files/", "files"):
        for info, url in zip(page["files"], page["urls"], strict=True):
            listed.add(info["path"])
            with urllib.request.urlopen(url, timeout=30) as response:
                if response.read() != file_bytes(info["path"]):
                    report.violations.append(f"file {info['path']} is listed but not whole")
    for entry in entries:
        if entry["kind"] == "file":
            _tally(report, "file", entry["path"] in listed, entry["path"])


def check_accounts(http: Http, entries: list[dict[str, Any]], report: Report) -> None:
    where = {"user": "/v2/users/", "group": "/v2/groups/", "device": "/v2/devices/"}
    for entry in entries:
        if entry["kind"] in where:
            status, _ = http.send("GET", where[entry["kind"]] + entry["id"])
            _tally(report, entry["kind"], status == 200, entry["id"])


def check_keys(http: Http, entries: list[dict[str, Any]], report: Report) -> None:
    """Each device's keys in the order their resets were acknowledged (one thread resets a
    device, so the journal's order is the commit order): all but the last must be refused;
    the last must work unless a later reset was sent (it may have committed unanswered)."""
    keys: defaultdict[str, list[str]] = defaultdict(list)
    sent_after: dict[str, bool] = {}
    for entry in entries:
        if entry["kind"] in ("device", "reset"):
            keys[entry["id"]].append(entry["key"])
            sent_after[entry["id"]] = False
        elif entry["kind"] == "reset-sent" and entry["id"] in keys:
            sent_after[entry["id"]] = True
    for device, chain in keys.items():
        refused = [_status(http, device, key) == 401 for key in chain]
        for old, gone in zip(chain[:-1], refused[:-1], strict=True):
            if not gone:
                report.violations.append(f"device {device}: a replaced API key {old[:8]}... works")
        current = not refused[-1] or sent_after[device]
        if len(chain) == 1 and not current:
            report.violations.append(f"device {device}: its only API key is refused")
        for n in range(1, len(chain)):
            found = refused[n - 1] and (n < len(chain) - 1 or current)
            _tally(report, "reset", found, device)


def _status(http: Http, device: str, key: str) -> int:
    status, _ = http.send("GET", f"/v2/devices/{device}", token=key)
    return int(status)


def check_retained(db: Path, entries: list[dict[str, Any]], report: Report) -> None:
    with read_only(db) as conn:
        retained = {
            str(t): bytes(p) for t, p in conn.execute("SELECT topic, payload FROM mqtt_retained")
        }
    for entry in entries:
        if entry["kind"] == "retained":
            found = retained.get(entry["topic"]) == entry["payload"].encode()
            _tally(report, "retained", found, entry["topic"])


def check_twin(http: Http, device: str, entries: list[dict[str, Any]], report: Report) -> None:
    twin = http.call("GET", f"/v2/devices/{device}/twin")["twin"]
    for entry in entries:
        if entry["kind"] == "twin":
            held = twin[entry["section"]].get(entry["key"], -1)
            what = f"{entry['section']}.{entry['key']} = {entry['value']}"
            _tally(report, "twin", held >= entry["value"], what)


def check_jobs(http: Http, db: Path, entries: list[dict[str, Any]], report: Report) -> None:
    for entry in entries:
        if entry["kind"] == "job":
            status, reply = http.send("GET", f"/v2/jobs/{entry['id']}")
            counts = reply.get("job", {}).get("counts", {}) if status == 200 else {}
            _tally(report, "job", sum(counts.values()) == entry["devices"], entry["id"])
    with read_only(db) as conn:
        kept = set(conn.execute("SELECT job_id, state, n FROM job_counts WHERE n > 0"))
        actual = set(
            conn.execute("SELECT job_id, state, count(*) FROM job_executions GROUP BY 1, 2")
        )
        over = list(
            conn.execute(
                "SELECT e.job_id FROM job_executions e JOIN jobs j ON j.id = e.job_id"
                " WHERE e.released = 1 AND e.state IN ('QUEUED', 'IN_PROGRESS')"
                " GROUP BY e.job_id"
                " HAVING count(*) > json_extract(j.policy, '$.max_in_progress')"
            )
        )
    if kept != actual:
        report.violations.append(f"job counts differ from executions: {sorted(kept ^ actual)[:5]}")
    if over:
        report.violations.append(f"jobs past their max_in_progress: {over[:5]}")


def _tally(report: Report, kind: str, found: bool, what: str) -> None:
    report.acknowledged[kind] += 1
    if found:
        report.found[kind] += 1
    else:
        report.lost.append(f"{kind} {what}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=Settings.kills)
    parser.add_argument("--seed", type=int, default=Settings.seed)
    parser.add_argument("--threads", type=int, default=Settings.threads)
    parser.add_argument("--up-min", type=float, default=Settings.up_min)
    parser.add_argument("--up-max", type=float, default=Settings.up_max)
    parser.add_argument("--folder", type=Path, help="keep the run here (default: temporary)")
    args = parser.parse_args(argv)
    settings = Settings(
        kills=args.kills,
        seed=args.seed,
        up_min=args.up_min,
        up_max=args.up_max,
        threads=args.threads,
        folder=args.folder,
    )
    report = run(settings)
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
