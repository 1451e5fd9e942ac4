"""Runs every benchmark and writes docs/performance.md: one table of every figure, each
beside its reference measured in the same run, with the ratio, the target, the CPU that
shows whether the load generator was the limit, and the command that reproduces it.

Usage: python -m bench.report [--quick] [--only requests_wrk,data,...] [--out FILE]
(BENCH_QUICK=1 is --quick: small sizes, the whole report in about ten minutes on an idle
2-core machine). Each benchmark prints its own tables as it runs; the report collects the
rows its `rows(quick)` returns (bench/rows.py). With `--only`, the rows of the benchmarks
that ran are spliced into the existing document and the rest of it is kept
(bench/splice.py); without, the whole document is written anew.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from bench import splice
from bench.rows import Row, Skipped, log

ROOT = Path(__file__).resolve().parents[1]
BENCHES = (
    "requests_wrk",
    "data",
    "files",
    "mqtt",
    "fleet",
    "tunnels",
    "twins",
    "twin_fleet",
    "jobs",
    "events",
    "enroll",
    "executable",
    "billing",
    "soak",
)
NOT_IN_TABLE = {
    "bench.http_requests": "a Python client, for quick checks; its ratios are too kind"
    " (bench.requests_wrk measures the same requests with wrk)",
    "bench.auth_cache": "the verified-principal cache on and off (a design check)",
    "bench.request_path": "what each layer of the request path costs (a design check)",
}


TWINS_NOTES = (
    "## Where the twin delta's round trip goes",
    "",
    "One `PATCH desired` at a time (`python -m bench.twins`, 10 devices, a 67-byte twin, 1,000",
    "rounds), each stage timed in the server with `time.perf_counter_ns()` stamps put in for",
    "the measurement and taken out again (2026-11-28, load average 4 to 5 on the two cores:",
    "other work shared them). Microseconds, p50 / p99, after the changes of #29's last round:",
    "",
    "| stage | p50 | p99 |",
    "|---|---|---|",
    "| headers read, handler started (aiohttp) | 73 | 136 |",
    "| caller known (a cached access token) | 46 | 95 |",
    "| the body awaited (this client sends it in a packet of its own) | 15 | 120 |",
    "| the body parsed and checked (JSON rules, schema, If-Match) | 71 | 149 |",
    "| who may: the device and the caller's standing to it | 56 | 118 |",
    "| the update checked against the limits, the audit event made | 33 | 80 |",
    "| hand-off to the writer thread (queue, wake-up, the GIL) | 28 | 1,883 |",
    "| BEGIN IMMEDIATE | 13 | 38 |",
    "| the write: device and twin read, merge, upsert, audit row, savepoint | 118 | 234 |",
    "| COMMIT: WAL pages written, fsync (`synchronous = FULL`) | 179 | 5,392 |",
    "| the writer tells the loop (one call_soon_threadsafe per group commit) | 18 | 44 |",
    "| the loop wakes and settles the batch's futures | 13 | 54 |",
    "| the coroutine resumes | 7 | 21 |",
    "| the delta computed and routed to the device's session | 32 | 68 |",
    "| the delta's socket write (it wakes the device's client) | 71 | 116 |",
    "| **headers in to the delta written** | **791** | **7,712** |",
    "",
    "Before, on the same run's neighbour (same load, same code but for the two changes):",
    "COMMIT 326 / 7,445, and the delta left only after the PATCH's whole HTTP answer (made,",
    "framed, logged and written: another 82 us at p50); headers in to delta written 1,191 /",
    "8,804. Over five such pairs the twin's p50 went from 1.67 ms to 1.19 ms (median of the",
    "runs), the durable data `PUT`'s from 1.59 ms to 1.14 ms, COMMIT's p50 from 406 us to 236",
    "us. What changed: the writer keeps the WAL from growing (a commit that makes the file",
    "longer paid its fsync a journal commit of the file system: 270 us at p50 against 110 to",
    "165 us for one that overwrites; storage/writer.py), and the broker hands a server notice",
    "to the device's socket at once instead of at the end of the loop's round. The storage",
    "alone, 4,000 one-row durable writes 0.3 ms apart, three runs each in turns: p50",
    "479-1,199 us before, 247-486 us after; p99 8.0-16.6 ms before, 4.1-9.7 ms after (the WAL",
    "grew to its 64 MiB limit before, stayed at 4-8 MiB after): the checkpoints that now run",
    "every 1,000 pages do not lengthen the tail. Under that load the p99 was the disk's (a",
    "bare `os.fsync` loop: 125 us at p50, 3 ms at p99). On a quiet machine it is not: a bare",
    "overwrite-`fdatasync` loop on the same ext4 disk took 94 us at p50 and 158 us at p99",
    "(5,000 calls, 2026-11-28 01:34 UTC, load average 0.8), and the rows above (quiet) put",
    "the twin's p99 at 1.3 to 1.8 ms, within the noise of a durable data `PUT`'s, against",
    "the plain publish's 0.20 to 0.25 ms. What keeps it above 3x is the cost of any durable",
    "HTTP write in this stack (about 300 us of request handling before the writer, 350 of",
    "write and commit, 100 for the delta, at p50), not the twin's own work. Not done:",
    "committing on the loop's thread when the writer is idle (it would save the two",
    "hand-offs, about 60 us, but stop every request and every MQTT client for the fsync).",
    "",
    "Since that run a twin PATCH's body also skips jsonschema (its keys' length rules can",
    "report no shape error; api/shapes.py): the schema check went from 21 us to 2 us of the",
    "body's stage.",
    "",
    "### This round: the reads of every authenticated write",
    "",
    "Measured the same way (stage stamps put in and taken out again; `python -m bench.twins`'s",
    "measurement, 10 devices, 1,000 rounds), on a machine that other work kept at a load",
    "average of 10 to 12 on its two cores (2026-11-28, 03:17 to 03:24 UTC), so the",
    "microseconds below are each stage's CPU (`time.thread_time_ns()`, which waiting for a",
    "core does not count), p50 / p99 (a row of several stamped stages: the sums of theirs),",
    "the code before and after run in turns; the pair of runs nearest in load:",
    "",
    "| stage (CPU) | before | after |",
    "|---|---|---|",
    "| caller known (a cached token; the snapshot begun, the epochs read) | 73 / 207 | 71 / 217 |",
    "| the body awaited, parsed and checked (JSON rules, fields) | 97 / 401 | 92 / 370 |",
    "| who may: the caller's grants (cached; their epoch) | 17 / 79 | 9 / 76 |",
    "| who may: the device, what it holds, the relation | 90 / 210 | 88 / 230 |",
    "| the update checked against the limits, the audit event made | 59 / 130 | 53 / 134 |",
    "| writer: the job taken, BEGIN IMMEDIATE, SAVEPOINT | 27 / 156 | 23 / 133 |",
    "| the write's reads: the device and the twin | 48 / 179 | 28 / 106 |",
    "| the merge, the size checked | 28 / 91 | 24 / 70 |",
    "| the upsert (the row encoded, the statement) | 42 / 107 | 34 / 97 |",
    "| the audit row (its names read by its insert), RELEASE | 79 / 182 | 74 / 162 |",
    "| COMMIT (the WAL's pages written; the fsync's time in the kernel) | 139 / 324 | 121 / 387 |",
    "| the delta computed, routed, written to the device's socket | 80 / 224 | 68 / 230 |",
    "",
    "The sums of the p50s: 336 us of the event loop's CPU before the writer became 314, 222",
    "us of the writer's before its COMMIT became 182 (the other pair, both at a higher load:",
    "409 and 403, 267 and 224). The wall-clock round trip of these runs (1.2 to 2.3 ms at",
    "p50, 28 to 36 ms at p99, before and after alike) moved with the load, not the code.",
    "What changed (#29):",
    "",
    "- The caches an authenticated request consults (verified tokens, device API keys, the",
    "  callers' permissions, what is kept about users) read the epochs they watch in one",
    "  statement per snapshot (`storage/epochs.py`), not one each: every authenticated",
    "  request, read or write, runs one statement less (4.0 us of CPU against 6.4 for the",
    "  two it replaces, best of 15 x 500 in one process).",
    "- A twin update's write reads the twin's row alone and the device's only when there is",
    "  no twin (a twin row lives only while its device does: `ON DELETE CASCADE`), where it",
    "  read both: 8 us of CPU against 18 (best of 15 x 500). A join of the two rows was tried",
    "  and left out: it cost what the two reads did, and a join of a device with the access",
    '  it holds (for "who may", one statement where there are two) cost the loop about 220',
    "  us of CPU in the server where the two reads took 70 to 75, so it was left out too.",
    "- `Codec.encode` builds a record's columns in one pass: 5.8 us against 6.7 for a twin,",
    "  3.1 against 4.4 for an audit event (every write encodes one or two).",
    "",
    "Also measured, and not ours to cut: garbage collection is not what makes the p99. The",
    "server's collector ran 9 times in a 3,000-request run (twin, publish and data PUT",
    "rounds; young generation, 180 us each) and once on the middle generation (1.5 ms),",
    "under 1% of the requests. Over those runs the p99 of every path (the plain publish's",
    "too: 11 to 21 ms) was the loaded machine's. The target stays out of reach for a durable",
    "write in this stack: the round trip is the cost of any durable HTTP write (the data",
    "`PUT` beside it is within a few percent), and the plain publish does none of it.",
    "",
    "### The stack's floor under the target",
    "",
    "`bench.twins` also times, after edge has stopped, the same durable PUT one at a time",
    "against bench/bare_data_server.py on a copy of the same database: aiohttp and SQLite",
    "(`synchronous = FULL`, one fsync a write) with none of edge's work (no caller, no",
    "permission, no checks, no audit row, no group commit, no MQTT). Every HTTP request of",
    "the benchmark goes over a plain socket, made before the clock starts (bench/raw_http.py),",
    "as the MQTT packets are: `http.client` had added about 0.1 ms to each round trip. On a",
    "quiet machine (2026-11-28 06:55 UTC, load average 0.5 before; the table's rows) the bare",
    "PUT's p99 was 0.69 ms and 0.85 ms at the two sizes, against the plain publish's 0.18",
    "and 0.22 ms, whose 3x (0.54 and 0.66 ms) is the target: the floor alone is 3.8x and",
    "3.9x, past the target before edge adds anything (and its time holds the client's read",
    "of the HTTP answer too, which the twin's does not: a few microseconds here). Its p50 was",
    "0.46 and 0.54 ms; the twin's delta 0.73 and 0.91 ms at p50, 1.09 and 1.29 ms at p99.",
    "The target is under what the stack edge is built on does for the simplest durable HTTP",
    "write, so no path of edge's own can meet it on this machine; what edge adds above that",
    "floor (0.3 to 0.4 ms at p50: the caller, who may, the checks, the audit row, the",
    "hand-offs to the writer thread and the delta) is what the rounds above cut.",
)

JOBS_NOTES = (
    "## How the jobs' figures are measured",
    "",
    "`python -m bench.jobs` runs `edge serve` on a fresh data folder for each size. In a",
    "rollout every device is a raw MQTT client subscribed at QoS 1 to its `jobs/#`: on",
    "`notify-next` it publishes IN_PROGRESS (with `expected_version`), on that update's",
    "`accepted` SUCCEEDED; the figure is the devices over the time from `POST /v2/jobs` to",
    "the last SUCCEEDED acknowledged (durable), for a job naming its devices by a tag they",
    "hold and for one naming them by their IDs. Its reference is the same devices each",
    "sending two durable twin updates in turn: the same two acknowledged writes, no",
    "scheduler. Throttled, `max_per_minute` is half the devices, so the second half waits",
    "for the next minute's window; the reference is the fastest that policy allows (every",
    "device in 60 s). The GET (`GET /v2/jobs/{id}` of a finished job, an org admin's token,",
    "wrk) is measured during a rollout paced by `max_in_progress` (a tenth of the devices;",
    "the target is on this one) and during rollouts with no policy back to back (a new job",
    "whenever fewer than two are left to finish, which keeps the server's write path",
    "saturated; no target), by tag and by IDs, each beside the same GET with no device",
    "connected, in turns, the best of each.",
    "The scheduler's tick is timed in one process on a real data folder, as bench.billing",
    "is: `time.process_time()` (every thread of the process, the database writer's among",
    "them) around each `await Scheduler.tick()`, over ticks that release one execution",
    "(`max_in_progress` 1; between two ticks, untimed, the device released reports",
    "SUCCEEDED) and over ticks with nothing due (5 in progress, the rest waiting), for a job",
    "over 10 and one over 10,000 devices, named by a tag and by their IDs; only the publish",
    "of notify-next is left out (no broker in that process), a cost per device released. The",
    "artifact is a file of random bytes in a group's files store named by a job; each device",
    "reads its presigned URL with its API key; 20 curl processes fetch those URLs at once,",
    "then 20 fetch the same file from nginx (Debian's, started on a free port with its",
    "defaults: a worker per core, sendfile), in turns, the best of three; the figure is all",
    "the bytes over the wall time from the first start to the last end.",
)


ENROLL_NOTES = (
    "## How the provisioning figures are measured",
    "",
    "`python -m bench.enroll` first signs client certificates for one EC P-256 key with a",
    "site CA's key in a loop in its own process (`SiteCa.sign_client`, the `cryptography`",
    "call both routes make), on one core: the reference of every row. Renewals: 1 and 8",
    "devices of an `edge serve` (its own data folder, `device_certificate_renewal_seconds`",
    "0) each renew their own certificate with their API key as soon as answered, a CSR made",
    "once per device. Enrollments: 1 or 8 clients send `POST /v2/provisioning/enroll` with",
    "one claim of 100,000 uses, each request with a CSR of its own (a new EC P-256 key,",
    "empty subject), all made before the timed part so that key generation is not measured;",
    "each size runs on a new site of 10 devices made by an admin and 20 enrolled to warm up",
    "(the row's 30), and 8 clients again on a new site where 2,000 more enrolled first,",
    "untimed (2,030). A site grows by the devices enrolled while it is measured. Each",
    "request is a device, its API key, a certificate and an audit event in one durable",
    "write. The generator is one aiohttp process; its CPU column stays near a tenth of a",
    "core, so the server, not the generator, is the limit.",
)


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "?"


def machine() -> str:
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores, {cpu_model()}, load average (1/5/15 min) {load}"


@dataclass
class Collected:
    """Every benchmark's rows; those that ran to the end; what failed or was skipped;
    seconds each took; and the sections that benchmarks with a `details()` add (the
    soak's reports)."""

    rows: list[Row] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    took: dict[str, float] = field(default_factory=dict)
    sections: list[str] = field(default_factory=list)


def collect(names: list[str], quick: bool) -> Collected:
    found = Collected()
    rows, sections, problems, took = found.rows, found.sections, found.problems, found.took
    for name in names:
        log(f"\n===== bench.{name} ({'quick' if quick else 'full'}) =====")
        began = time.monotonic()
        try:
            module = importlib.import_module(f"bench.{name}")
            rows += module.rows(quick)
            if hasattr(module, "details"):
                sections += ["", f"## bench.{name}, as it ran", "", *module.details()]
            found.ran.append(name)
        except Skipped as why:
            problems.append(f"bench.{name} was not run: {why}")
        except Exception as error:  # noqa: BLE001 - one failed benchmark must not lose the rest
            traceback.print_exc()
            problems.append(f"bench.{name} failed: {type(error).__name__}: {error}"[:400])
        took[name] = time.monotonic() - began
    return found


def cell(value: float | None, unit: str = "") -> str:
    if value is None:
        return ""
    whole = float(value).is_integer()
    digits = 0 if whole or abs(value) >= 100 else 1 if abs(value) >= 10 else 2
    return f"{value:,.{digits}f} {unit}".strip()


def table(rows: list[Row]) -> list[str]:
    lines = [
        "| Figure | edge | Reference | Reference figure | Ratio | Target | Met | CPU | Command |",
        "|---|---:|---|---:|---:|---|---|---|---|",
    ]
    for r in rows:
        ratio = f"{r.ratio:.2f}x" if r.ratio is not None else ""
        met = {True: "yes", False: "**no**", None: ""}[r.met]
        reference = cell(r.reference_value, r.unit) if r.reference_value is not None else ""
        lines.append(
            f"| {r.name} | {cell(r.edge, r.unit)} | {r.reference} | {reference} | {ratio} |"
            f" {r.target} | {met} | {r.load} | `{r.command}` |"
        )
    return lines


def document(
    rows: list[Row],
    problems: list[str],
    took: dict[str, float],
    quick: bool,
    before: str,
    after: str,
    started: str,
) -> str:
    loaded = _loaded(before)
    kind = "quick sizes (`make bench-quick`)" if quick else "full sizes (`make bench`)"
    out = [
        "# Performance",
        "",
        "Every figure the issues asked for, each measured beside its reference in the same run",
        "on the same machine. Written by `python -m bench.report`; do not edit by hand.",
        "",
        f"- Run: {started}, {kind}, {sum(took.values()) / 60:.0f} minutes.",
        f"- Machine before the run: {before}.",
        f"- Machine after the run: {after}.",
    ]
    if loaded:
        out += [
            "",
            "**Produced on a loaded machine** (load average above half the cores when the run",
            "began: other work shared the CPU), so rates are low and latencies high against a",
            "quiet run, and ratios lean on which process the scheduler favoured. Re-run on a",
            "quiet machine",
            "before quoting a figure.",
        ]
    out += [
        "",
        "Ratio is how edge does against the reference, above 1 better whatever the unit",
        "(edge/reference for rates, reference/edge for times, latencies and memory). Target",
        "is the issues' floor on that ratio, or a ceiling on the figure itself. CPU is the",
        "share of one core the server took and, after `gen`, the load generator's.",
        "",
        *table(rows),
        "",
        "## The load generators are not the limit",
        "",
        "- HTTP rates come from wrk (C, one thread, on the other core of two). Where a row",
        "  shows `srv` near 100% the server took a whole core while wrk took far less: the",
        "  server was the limit. The bare handlers, loaded by the same wrk with the same",
        "  settings in the same run, reach higher rates than edge on the same requests (the",
        "  reference column), which a saturated wrk could not give; on a machine that other",
        "  work keeps busy neither server gets a whole core, and the CPU column shows it.",
        "- MQTT with paho clients costs the clients more CPU per message than the broker, so",
        "  the broker's ceiling is the saturation rows: raw-socket clients (well under a",
        "  microsecond a message); when a second publisher process brings no more",
        "  throughput, the broker is the limit (bench/mqtt.py prints its verdict).",
        "- Files and tunnels use curl and a direct loopback copy as the native clients; the",
        "  references (dd, MD5, the direct TCP copy) run on the same bytes.",
        "- The twin delta's round trip is a latency, one request at a time over raw sockets",
        "  and a kept-alive HTTP connection over a plain socket (bench/raw_http.py: requests",
        "  made before the clock starts, answers read for their status and length only):",
        "  neither side is near a core (its CPU column), so",
        "  what is timed is the server's path, the plain publish's beside it on the same run.",
        "  The twin fleet's devices are raw sockets in a process of their own (a frame per",
        "  report); its GET rates come from wrk, as above.",
        "- The rollouts' devices are raw sockets in one process of their own (a frame per",
        "  update): its share of a core is the `gen` of their rows, beside the server's; the",
        "  GET rates during rollouts come from wrk, as above, with the fleet's share added.",
        "  The artifact downloads are curl processes, as many against nginx on the same bytes.",
        "- The soak paces every load below saturation (its CPU column: the server's share and",
        "  the generators' together, wrk, the MQTT device processes and the soak's own).",
        "",
        *TWINS_NOTES,
        "",
        *JOBS_NOTES,
        "",
        *ENROLL_NOTES,
        "",
        "## The soak's rules",
        "",
        "`python -m bench.soak` (`make soak`, 10 minutes by default; `SOAK_SECONDS` or",
        "`--seconds`) fails on any error, or when over the second half of the run the",
        "server's RSS (the least of each 10 s report) grows by more than 5%, or the HTTP",
        "mix's p99 grows by more than 50% of its median and by more than 5 ms. Growth is a",
        "Theil-Sen slope times the half's length. A healthy server meets both: its RSS",
        "levels off once its caches are warm, and its p99 does not climb under a steady load.",
        "",
        "A 60-minute `make soak` (`SOAK_SECONDS=3600`, 2026-11-27 12:14-13:15 UTC) passed: 0",
        "errors; the server's RSS (the least of each 10 s) was 99.2 MiB at 10 s, 103.6 MiB at",
        "10 and 20 minutes, 105.6 MiB at 30, 40, 50 and 60 minutes: +0.0% over the second half;",
        "the HTTP p99's growth over the second half was +44% / +10.9 ms (limit 50% and 5 ms).",
        "Its one step, +2 MiB at 27 minutes, was malloc's (1 MiB more free in its arenas, one",
        "0.9 MiB block kept), and SQLite's memory stayed at 4.5-4.6 MiB (memory reports every 5",
        "minutes, docs/operating.md); in a traced 10-minute run Python's heap held at 21-23",
        "MiB, no allocation site growing from one report to the next. The machine was loaded by",
        "other test runs (load average 10.7 at the start, 13.6 at 20 minutes, 5.4 at the end;",
        "some task waited for a CPU 87% of the time in the first half and 50% in the second),",
        "so the server got 35% of a core and served 365 req/s of the 400 paced (354 and 377 in",
        "each half); the load generators took 7% of a core, so they were not the limit. The p99",
        "(median 75.5 ms in the first half, 25.0 ms in the second) followed that load: it rose",
        "again in the last ten minutes as the machine grew busy again (30% to 70-78%).",
        "",
        "## Not in the table",
        "",
    ]
    out += [f"- `python -m {name}`: {why}." for name, why in NOT_IN_TABLE.items()]
    out += [f"- {problem}" for problem in problems]
    out += [
        "",
        "Time per benchmark: "
        + ", ".join(f"{name} {seconds / 60:.1f} min" for name, seconds in took.items())
        + ".",
        "",
    ]
    return "\n".join(out)


def _loaded(before: str) -> bool:
    """Other work on the machine when the run began: a one-minute load average above half
    the cores. The load at the end is printed but not judged: the benchmarks themselves
    keep every core busy (a server near one core, wrk, the device fleets, twenty curls and
    nginx), so it says what they did, not what else ran."""
    return _first_load(before) > 0.5 * (os.cpu_count() or 1)


def _load(text: str) -> str:
    """The load averages of `machine()`'s text."""
    return text.split("load average (1/5/15 min) ")[-1]


def note(ran: list[str], line: str, started: str, minutes: float, before: str, after: str) -> str:
    """The bullet that says where spliced rows came from."""
    names = ", ".join(f"`bench.{name}`" for name in ran)
    loaded = "; **produced on a loaded machine**" if _loaded(before) else ""
    return (
        f"{splice.NOTE}{names} from `{line}` on {started}, {minutes:.0f} minutes (load average"
        f" before {_load(before)}, after {_load(after)}){loaded}."
    )


def spliced(old: str, found: Collected, order: list[str], note_line: str) -> str:
    """The table and sections of `old` with the rows of the benchmarks that ran."""
    run = splice.Run(
        found.ran,
        order,
        table(found.rows)[2:],
        found.sections,
        note_line,
        found.took,
        found.problems,
    )
    return splice.splice(old, run)


def _first_load(text: str) -> float:
    try:
        return float(text.split("load average (1/5/15 min) ")[1].split(" / ")[0])
    except (IndexError, ValueError):
        return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", default=os.environ.get("BENCH_QUICK", "") not in ("", "0")
    )
    parser.add_argument("--only", help="comma-separated benchmark names (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(BENCHES)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    before = machine()
    found = collect(names, args.quick)
    old = args.out.read_text() if args.only and args.out.exists() else ""
    if splice.has_table(old):  # --only: the other benchmarks' figures are kept
        line = "python -m bench.report --only " + args.only + (" --quick" if args.quick else "")
        minutes = sum(found.took.values()) / 60
        text = spliced(
            old, found, list(BENCHES), note(found.ran, line, started, minutes, before, machine())
        )
    else:
        text = document(
            found.rows, found.problems, found.took, args.quick, before, machine(), started
        )
        text = text.rstrip("\n") + "\n" + "\n".join(found.sections) + "\n"
    args.out.write_text(text)
    print(text)
    log(f"wrote {args.out}")
    sys.exit(1 if found.problems and not found.rows else 0)


if __name__ == "__main__":
    main()
