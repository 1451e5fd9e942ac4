"""One run's figures spliced into docs/performance.md (`python -m bench.report --only X,Y`).

A run of a few benchmarks must not throw away the figures of the others: the table's rows
of the benchmarks that ran are replaced where they stood (a benchmark new to the table goes
after the rows of those listed before it in bench.report.BENCHES), their "as it ran"
sections are replaced, a bullet under the run's description says when these rows were
measured and on what load, the time line and the problems of the benchmarks tried are
brought up to date, and every other line is kept as it was. A row belongs to the
benchmark its command names (`python -m bench.events ...`).

A benchmark that failed is not in `ran`: its old rows stay, and its problem is listed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

ROW = "| "
NOTE = "- Rows of "
TIMES = "Time per benchmark: "
NOT_IN_TABLE = "## Not in the table"
_COMMAND = re.compile(r"`python -m bench\.(\w+)[ `]")
_SECTION = re.compile(r"^## bench\.(\w+), as it ran$")
_PROBLEM = re.compile(r"^- bench\.(\w+) (failed|was not run)")
_TIME = re.compile(r"^(\w+) ([0-9.]+) min$")


@dataclass(frozen=True)
class Run:
    """What one `--only` run brings: the benchmarks that ran to the end (`ran`), the
    table lines of their rows, their sections' lines, the note on the run, the minutes
    each benchmark tried took, and the problems met."""

    ran: Sequence[str]
    order: Sequence[str]
    rows: Sequence[str]
    sections: Sequence[str] = ()
    note: str = ""
    took: dict[str, float] = field(default_factory=dict)
    problems: Sequence[str] = ()


def has_table(text: str) -> bool:
    """Whether a document has a table of figures to splice into."""
    return any(bench_of(line) is not None for line in text.splitlines())


def bench_of(line: str) -> str | None:
    """The benchmark a table row came from: the module its command cell names."""
    if not line.startswith(ROW):
        return None
    found = _COMMAND.search(line.rstrip().rsplit("|", 2)[-2])
    return found.group(1) if found else None


def splice(old: str, run: Run) -> str:
    lines = old.rstrip("\n").split("\n")
    lines = _rows(lines, run)
    lines = _note(lines, run)
    lines = _times(lines, run.took)
    lines = _problems(lines, run)
    lines = _sections(lines, run)
    return "\n".join(lines) + "\n"


def _rows(lines: list[str], run: Run) -> list[str]:
    """Each benchmark that ran: its new rows where its old ones stood, else in order."""
    at = [i for i, line in enumerate(lines) if line.startswith("|")]
    first, last = at[0] + 2, at[-1] + 1  # the body, below the header and its rule
    fresh = {name: [r for r in run.rows if bench_of(r) == name] for name in run.ran}
    body: list[str] = []
    for line in lines[first:last]:
        name = bench_of(line)
        if name in fresh:
            body += fresh.pop(name)
        elif name not in run.ran:
            body.append(line)
    for name, rows in fresh.items():  # new to the table
        place = _after(body, name, run.order)
        body[place:place] = rows
    return lines[:first] + body + lines[last:]


def _after(body: list[str], name: str, order: Sequence[str]) -> int:
    """Where a benchmark's first rows go: after the last row of one listed before it."""

    def rank(bench: str) -> int:
        return order.index(bench) if bench in order else len(order)

    place = 0
    for i, line in enumerate(body):
        bench = bench_of(line)
        if bench is not None and rank(bench) <= rank(name):
            place = i + 1
    return place


def _note(lines: list[str], run: Run) -> list[str]:
    """The run's bullet before the machine's, in place of notes it supersedes (those on
    benchmarks that all ran again)."""
    if not run.note:
        return lines
    kept = [line for line in lines if not _superseded(line, run.ran)]
    before = next((i for i, x in enumerate(kept) if x.startswith("- Machine before")), None)
    if before is None:
        return kept
    return kept[:before] + [run.note] + kept[before:]


def _superseded(line: str, ran: Sequence[str]) -> bool:
    if not line.startswith(NOTE):
        return False
    named = re.findall(r"`bench\.(\w+)`", line.split(" from ", 1)[0])
    return bool(named) and all(name in ran for name in named)


def _times(lines: list[str], took: dict[str, float]) -> list[str]:
    """The time line, with the minutes of the benchmarks tried now."""
    out = []
    for line in lines:
        if line.startswith(TIMES):
            times = _parse_times(line[len(TIMES) :])
            times.update({name: seconds / 60 for name, seconds in took.items()})
            line = TIMES + ", ".join(f"{n} {m:.1f} min" for n, m in times.items()) + "."
        out.append(line)
    return out


def _parse_times(text: str) -> dict[str, float]:
    found = {}
    for part in text.rstrip(".").split(", "):
        match = _TIME.match(part.strip())
        if match:
            found[match.group(1)] = float(match.group(2))
    return found


def _problems(lines: list[str], run: Run) -> list[str]:
    """The problems of the benchmarks tried now replace theirs from before, at the end of
    the "Not in the table" list."""
    kept = [x for x in lines if not ((m := _PROBLEM.match(x)) and m.group(1) in run.took)]
    if not run.problems or NOT_IN_TABLE not in kept:
        return kept
    end = kept.index(NOT_IN_TABLE) + 2  # below the heading and its blank line
    while end < len(kept) and kept[end].startswith("- "):
        end += 1
    return kept[:end] + [f"- {problem}" for problem in run.problems] + kept[end:]


def _sections(lines: list[str], run: Run) -> list[str]:
    """The "as it ran" sections of the benchmarks that ran, replaced (at the end)."""
    out: list[str] = []
    dropping = False
    for line in lines:
        if line.startswith("## "):
            found = _SECTION.match(line)
            dropping = found is not None and found.group(1) in run.ran
        if not dropping:
            out.append(line)
    while out and out[-1] == "":
        out.pop()
    return out + list(run.sections)
