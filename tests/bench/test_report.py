"""`python -m bench.report --only X` splices the figures of the benchmarks it ran into
docs/performance.md and keeps the rest (bench/report.py, bench/splice.py)."""

from __future__ import annotations

import pytest

from bench import report, splice
from bench.report import Collected
from bench.rows import Row

BEFORE = "2 cores, AMD EPYC, load average (1/5/15 min) 0.10 / 0.20 / 0.30"
AFTER = "2 cores, AMD EPYC, load average (1/5/15 min) 0.40 / 0.50 / 0.60"


def row(bench: str, name: str, edge: float) -> Row:
    return Row(name, edge, "req/s", "ref", 10.0, command=f"python -m bench.{bench} --x 1")


def old_document() -> str:
    """A whole report of data, events and soak (with the soak's section), a problem."""
    rows = [
        row("data", "data GET", 1.0),
        row("data", "data PUT", 2.0),
        row("events", "SSE lost", 3.0),
        row("events", "SSE p99", 4.0),
        row("soak", "soak errors", 5.0),
    ]
    took = {"data": 60.0, "events": 120.0, "soak": 180.0}
    text = report.document(rows, ["bench.twins failed: boom"], took, False, BEFORE, AFTER, "T0")
    return text.rstrip("\n") + "\n\n## bench.soak, as it ran\n\n```\nold soak table\n```\n"


def spliced(found: Collected) -> str:
    note = report.note(found.ran, "python -m bench.report --only x", "T1", 3, BEFORE, AFTER)
    return report.spliced(old_document(), found, list(report.BENCHES), note)


def figures(text: str) -> list[str]:
    """The first cell of each row of the table."""
    return [line.split(" | ")[0][2:] for line in text.splitlines() if splice.bench_of(line)]


def test_only_the_rows_of_the_benchmarks_that_ran_are_replaced_in_place() -> None:
    found = Collected(
        rows=[row("events", "SSE lost (10)", 6.0), row("events", "SSE lost (500)", 7.0)],
        ran=["events"],
        took={"events": 240.0},
    )
    text = spliced(found)
    assert figures(text) == [
        "data GET",
        "data PUT",
        "SSE lost (10)",
        "SSE lost (500)",
        "soak errors",
    ]
    old = old_document()
    for kept in ("| data PUT | 2 req/s |", "```\nold soak table\n```", "- Run: T0"):
        assert kept in old and kept in text
    assert "Time per benchmark: data 1.0 min, events 4.0 min, soak 3.0 min." in text
    assert "- bench.twins failed: boom" in text  # not tried now: its problem stays
    note = "- Rows of `bench.events` from `python -m bench.report --only x` on T1, 3 minutes"
    assert note in text
    assert text.index(note) < text.index("- Machine before the run:")


def test_a_benchmark_new_to_the_table_goes_after_those_listed_before_it() -> None:
    found = Collected(rows=[row("twins", "twin p99", 8.0)], ran=["twins"], took={"twins": 6.0})
    text = spliced(found)
    assert figures(text) == [
        "data GET",
        "data PUT",
        "twin p99",
        "SSE lost",
        "SSE p99",
        "soak errors",
    ]
    assert "- bench.twins failed" not in text  # tried again, and it ran


def test_a_failed_benchmark_keeps_its_rows_and_says_why() -> None:
    found = Collected(ran=[], took={"events": 1.0}, problems=["bench.events failed: no wrk"])
    text = spliced(found)
    assert figures(text) == figures(old_document())
    assert "- bench.events failed: no wrk" in text and "- bench.twins failed: boom" in text


def test_a_section_is_replaced_and_a_rerun_supersedes_its_note() -> None:
    found = Collected(
        rows=[row("soak", "soak errors", 0.0)],
        ran=["soak"],
        took={"soak": 60.0},
        sections=["", "## bench.soak, as it ran", "", "new soak table"],
    )
    once = spliced(found)
    assert "old soak table" not in once and once.rstrip().endswith("new soak table")
    again = splice.splice(
        once, splice.Run(["soak"], report.BENCHES, [], note="- Rows of `bench.soak` from y.")
    )
    assert again.count("- Rows of `bench.soak`") == 1 and "from y." in again


def test_a_run_is_loaded_by_the_work_before_it_not_by_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The load when a run begins counts past half the cores; the load at its end, which
    the benchmarks themselves make, is not judged."""
    monkeypatch.setattr(report.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(report.os, "getloadavg", lambda: (3.5, 0.0, 0.0))
    quiet, busy = BEFORE, "2 cores, AMD EPYC, load average (1/5/15 min) 1.10 / 0.20 / 0.30"
    assert (report._loaded(quiet), report._loaded(busy)) == (False, True)
