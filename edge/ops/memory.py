"""The memory report an operator asks for with SIGUSR2: where the server's memory is.

A growing RSS has three kinds of cause, each seen in a different place: Python objects
kept alive (tracemalloc, by the traceback that allocated them), SQLite's page caches
(its own allocator's count), and memory glibc holds but Python freed (malloc's arenas:
fragmentation, or free memory not handed back). The report gives all three beside the
RSS, so the kind is plain before anyone reads a traceback.

Tracing allocations slows every allocation, so it is off unless `memory_trace_frames` is
set (a restart); the report then adds the biggest changes, by traceback, since the report
before. Without it the report still has the figures. Reports go to
`diagnostics/` in the data folder, one file each, and the log names the file.
"""

from __future__ import annotations

import ctypes
import linecache
import logging
import threading
import time
import tracemalloc
from pathlib import Path

from storage import layout
from storage.pragmas import sqlite_memory

TOP = 25  # differences listed per comparison
MIB = 1 << 20
# What tracing and its report allocate, and imports: never the cause of a climb in a server.
IGNORED = (tracemalloc.__file__, linecache.__file__, "<frozen importlib._bootstrap>", "<unknown>")
Groups = dict[tracemalloc.Traceback, tuple[int, int]]  # bytes and blocks by traceback
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


class MemoryReports:
    """Writes a report on each `write`, comparing with the allocations of the one before.

    Grouping a traced heap's allocations by traceback is Python work over every one of
    them (seconds for a server's heap), so `start` writes on a thread of its own: the
    loop keeps serving, only slower, meanwhile. Only the groups are kept between reports
    (a snapshot of every allocation would hold tens of MiB).
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.written = 0
        self._last: Groups | None = None
        self._busy = threading.Lock()

    def start(self) -> bool:
        """Write a report on a thread; False (and nothing started) while one is written."""
        if not self._busy.acquire(blocking=False):
            log.warning("a memory report is still being written: this request is ignored")
            return False
        threading.Thread(target=self._write_then_release, name="edge-memory", daemon=True).start()
        return True

    def write(self) -> Path:
        """Take a snapshot (when tracing), write the report and name its file in the log."""
        lines = [time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), *figures()]
        if tracemalloc.is_tracing():
            lines += self._differences(_groups())
        folder = self.data_dir / layout.DIAGNOSTICS_DIR
        layout.private_dir(folder)
        self.written += 1
        path = folder / f"memory-{time.strftime('%Y%m%dT%H%M%S')}-{self.written}.txt"
        layout.write_secret(path, ("\n".join(lines) + "\n").encode())  # whole or not at all
        log.info("memory report written to %s (%s)", path, lines[1])
        return path

    def _write_then_release(self) -> None:
        try:
            self.write()
        except OSError as exc:
            log.warning("the memory report could not be written: %s", exc)
        finally:
            self._busy.release()

    def _differences(self, now: Groups) -> list[str]:
        last, self._last = self._last, now
        if last is None:
            return ["", "The first report: the next one compares with it.", *_top(now, {})]
        return ["", "Since the last report:", *_top(now, last)]


def _groups() -> Groups:
    """The traced allocations by traceback: (bytes, blocks) each, without those of tracing,
    its report and imports (left out after grouping: a filter on the snapshot would match
    every frame of every trace, a minute's work on a server's heap)."""
    stats = tracemalloc.take_snapshot().statistics("traceback")
    return {s.traceback: (s.size, s.count) for s in stats if not _own(s.traceback)}


def _own(traceback: tracemalloc.Traceback) -> bool:
    return any(frame.filename in IGNORED for frame in traceback)


def _top(now: Groups, then: Groups) -> list[str]:
    """The biggest changes by traceback, each with its traceback, most recent call last."""
    changes = [
        (size - then.get(traceback, (0, 0))[0], traceback) for traceback, (size, _) in now.items()
    ]
    changes += [(-size, traceback) for traceback, (size, _) in then.items() if traceback not in now]
    lines = []
    for diff, traceback in sorted(changes, key=lambda c: abs(c[0]), reverse=True)[:TOP]:
        size, count = now.get(traceback, (0, 0))
        blocks = count - then.get(traceback, (0, 0))[1]
        lines.append(
            f"{diff / 1024:+.1f} KiB ({blocks:+d} blocks), now {size / 1024:.1f} KiB in {count}"
            " blocks"
        )
        lines += [f"    {line}" for line in traceback.format()]
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
