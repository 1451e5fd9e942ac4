"""The memory report an operator asks for with SIGUSR2: where the server's memory is.

A growing RSS has three kinds of cause, each seen in a different place: Python objects
kept alive (tracemalloc, by the traceback that allocated them), SQLite's page caches
(its own allocator's count), and memory glibc holds but Python freed (malloc's arenas:
fragmentation, or free memory not handed back). The report gives all three beside the
RSS, so the kind is plain before anyone reads a traceback.

Tracing allocations slows every allocation, so it is off unless `memory_trace_frames` is
set (a restart); the report then adds the biggest changes, by traceback, since the last
report and since the start. Without it the report still has the figures. Reports go to
`diagnostics/` in the data folder, one file each, and the log names the file.
"""

from __future__ import annotations

import ctypes
import linecache
import logging
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

from storage import layout
from storage.pragmas import sqlite_memory

TOP = 25  # differences listed per comparison
MIB = 1 << 20
# What tracing and its report allocate, and imports: never the cause of a climb in a server.
IGNORED = (tracemalloc.__file__, linecache.__file__, "<frozen importlib._bootstrap>", "<unknown>")
log = logging.getLogger("edge.memory")


class _MallInfo2(ctypes.Structure):
    """glibc's `struct mallinfo2` (2.33 and newer): what malloc holds, in bytes."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
            "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def start_tracing(frames: int) -> None:
    """Trace allocations with `frames` frames each, from now on (0: leave tracing off).
    Called before the site opens, so that what it builds is traced too."""
    if frames > 0 and not tracemalloc.is_tracing():
        tracemalloc.start(frames)


def figures() -> list[str]:
    """RSS beside what Python, SQLite and malloc each account for, one line each."""
    lines = [f"RSS {_rss() / MIB:.1f} MiB"]
    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        own = tracemalloc.get_tracemalloc_memory()
        lines.append(
            f"Python (traced) {current / MIB:.1f} MiB, peak {peak / MIB:.1f};"
            f" tracing itself {own / MIB:.1f} MiB"
        )
    used, peak = sqlite_memory()
    lines.append(f"SQLite {used / MIB:.1f} MiB, peak {peak / MIB:.1f}")
    info = _mallinfo()
    if info is not None:
        lines.append(
            f"malloc: {info.arena / MIB:.1f} MiB in arenas ({info.uordblks / MIB:.1f} in use,"
            f" {info.fordblks / MIB:.1f} free), {info.hblkhd / MIB:.1f} MiB mapped"
            f" in {info.hblks} blocks"
        )
    return lines


@dataclass
class MemoryReports:
    """Writes a report on each `write`; keeps the snapshots its comparisons need."""

    data_dir: Path
    first: tracemalloc.Snapshot | None = None
    last: tracemalloc.Snapshot | None = None
    written: int = field(default=0)

    def write(self) -> Path:
        """Take a snapshot (when tracing), write the report and name its file in the log."""
        lines = [time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), *figures()]
        if tracemalloc.is_tracing():
            lines += self._differences(_snapshot())
        folder = self.data_dir / layout.DIAGNOSTICS_DIR
        layout.private_dir(folder)
        self.written += 1
        path = folder / f"memory-{time.strftime('%Y%m%dT%H%M%S')}-{self.written}.txt"
        path.write_text("\n".join(lines) + "\n")
        log.info("memory report written to %s (%s)", path, lines[1])
        return path

    def _differences(self, now: tracemalloc.Snapshot) -> list[str]:
        lines: list[str] = []
        if self.last is not None:
            lines += ["", "Since the last report:", *_top(now, self.last)]
        if self.first is not None and self.first is not self.last:
            lines += ["", "Since the first report:", *_top(now, self.first)]
        if self.first is None:
            lines += ["", "The first report: the next ones compare with it.", *_largest(now)]
        self.first, self.last = self.first or now, now
        return lines


def _snapshot() -> tracemalloc.Snapshot:
    filters = [tracemalloc.Filter(False, name) for name in IGNORED]
    return tracemalloc.take_snapshot().filter_traces(filters)


def _top(now: tracemalloc.Snapshot, then: tracemalloc.Snapshot) -> list[str]:
    """The biggest changes by traceback, each with its traceback, most recent call last."""
    lines = []
    for stat in now.compare_to(then, "traceback")[:TOP]:
        lines.append(
            f"{stat.size_diff / 1024:+.1f} KiB ({stat.count_diff:+d} blocks),"
            f" now {stat.size / 1024:.1f} KiB in {stat.count} blocks"
        )
        lines += [f"    {line}" for line in stat.traceback.format()]
    return lines


def _largest(now: tracemalloc.Snapshot) -> list[str]:
    lines = []
    for stat in now.statistics("traceback")[:TOP]:
        lines.append(f"{stat.size / 1024:.1f} KiB in {stat.count} blocks")
        lines += [f"    {line}" for line in stat.traceback.format()]
    return lines


def _rss() -> int:
    try:
        for row in Path("/proc/self/status").read_text().splitlines():
            if row.startswith("VmRSS:"):
                return int(row.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _mallinfo() -> _MallInfo2 | None:
    """glibc's malloc figures, or None on another C library."""
    try:
        function = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    function.restype = _MallInfo2
    info: _MallInfo2 = function()
    return info
