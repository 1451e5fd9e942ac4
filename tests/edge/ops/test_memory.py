"""The memory report (edge/ops/memory.py): its figures always, and with tracing on, what
grew by the traceback that allocated it."""

from __future__ import annotations

import stat
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from edge.ops import memory

KEPT: list[bytes] = []  # what a test allocates and keeps alive between two reports


def allocate_and_keep() -> None:
    KEPT.extend(bytes(1000) + bytes([i % 256]) for i in range(2000))


def entries(section: str) -> list[str]:
    """A report section's entries: a line of sizes, then its traceback's lines."""
    found: list[str] = []
    for line in section.strip("\n").splitlines():
        if line.startswith(" ") and found:
            found[-1] += "\n" + line
        else:
            found.append(line)
    return found


@pytest.fixture
def tracing() -> Iterator[None]:
    was = tracemalloc.is_tracing()
    memory.start_tracing(5)
    try:
        yield
    finally:
        KEPT.clear()
        if not was:
            tracemalloc.stop()


def test_without_tracing_the_report_has_the_figures_and_no_tracebacks(tmp_path: Path) -> None:
    assert not tracemalloc.is_tracing()
    path = memory.MemoryReports(tmp_path).write()
    text = path.read_text()
    assert path.parent == tmp_path / "diagnostics"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700  # the data folder's own files
    assert "RSS " in text and "SQLite " in text and "malloc: " in text
    assert "Python (traced)" not in text and "File " not in text


def test_start_tracing_with_no_frames_leaves_it_off() -> None:
    memory.start_tracing(0)
    assert not tracemalloc.is_tracing()


@pytest.mark.usefixtures("tracing")
def test_a_traced_report_names_what_grew_since_the_last_one(tmp_path: Path) -> None:
    reports = memory.MemoryReports(tmp_path)
    first = reports.write().read_text()
    assert "Python (traced)" in first and "The first report" in first
    allocate_and_keep()
    second = reports.write().read_text()
    top = entries(second.split("Since the last report:")[1])[0]  # the biggest change
    assert top.startswith("+"), top
    assert Path(__file__).name in top and "KEPT.extend" in top, top
    KEPT.clear()
    third = reports.write().read_text()
    freed = entries(third.split("Since the last report:")[1])
    assert any(e.startswith("-") and "KEPT.extend" in e for e in freed), third


@pytest.mark.usefixtures("tracing")
def test_start_writes_on_a_thread_of_its_own(tmp_path: Path) -> None:
    reports = memory.MemoryReports(tmp_path)
    assert reports.start()
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob("diagnostics/memory-*.txt")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (report,) = tmp_path.glob("diagnostics/memory-*.txt")
    assert "The first report" in report.read_text()


@pytest.mark.usefixtures("tracing")
def test_the_report_leaves_out_its_own_allocations(tmp_path: Path) -> None:
    reports = memory.MemoryReports(tmp_path)
    reports.write()
    text = reports.write().read_text()
    assert "tracemalloc.py" not in text and "linecache.py" not in text
