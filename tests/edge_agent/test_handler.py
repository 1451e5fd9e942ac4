"""A device maker's program run with JSON in and out (edge_agent/handler.py): every way it
can fail is a Result that says why, and a program past its time is killed, not left
behind."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from edge_agent import handler

PY = sys.executable


@pytest.mark.parametrize(
    ("code", "answer", "printed", "failure"),
    [
        ("import json,sys; print(json.dumps({'got': json.load(sys.stdin)}))", True, True, ""),
        ("import sys; sys.stdin.read()", True, False, ""),
        ("import sys; sys.exit(3)", False, False, "exited with code 3"),
        ("print('not json')", False, False, "not JSON"),
        ("print('[1, 2]')", False, False, "not an object"),
    ],
)
async def test_outcomes(code: str, answer: bool, printed: bool, failure: str) -> None:
    result = await handler.run([PY, "-c", code], {"x": 1}, timeout=30)
    assert (result.answer is not None, result.printed) == (answer, printed)
    assert failure in result.failure and bool(result.failure) == bool(failure)
    if printed:
        assert result.answer == {"got": {"x": 1}}


async def test_a_program_that_cannot_start() -> None:
    result = await handler.run(["/nonexistent/handler"], {}, timeout=30)
    assert result.answer is None and "cannot start" in result.failure


async def test_a_program_past_its_time_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    # A shell notes its process ID at once (a Python's start on a loaded machine may take
    # much of the 3 s, and then there was no file to read), then becomes the sleep.
    script = f"echo $$ > {shlex.quote(str(pid_file))}; exec sleep 600"
    result = await handler.run(["/bin/sh", "-c", script], {}, timeout=3.0)
    assert result.timed_out and result.answer is None and "no answer within 3 s" in result.failure
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # killed and reaped


LINES = """
import json, os, sys
given = json.load(sys.stdin)
print(json.dumps({"progress": 10}), flush=True)
print("a line that is not JSON", flush=True)
print(json.dumps({"progress": 90, "env": os.environ["EDGE_JOB_ID"]}), flush=True)
print(json.dumps({"status_details": {"got": given}}))
sys.exit(int(sys.argv[1]))
"""


@pytest.mark.parametrize(("code", "failure"), [(0, ""), (4, "exited with code 4")])
async def test_a_program_that_reports_as_it_goes(code: int, failure: str) -> None:
    """Each JSON object line is handed on as it comes; the last is the answer, also when
    the program failed (a job's handler says why)."""
    heard: list[dict[str, object]] = []

    async def line(said: dict[str, object]) -> None:
        heard.append(said)

    program = [PY, "-c", LINES, str(code)]
    result = await handler.run_lines(program, {"x": 1}, 30, {"EDGE_JOB_ID": "j1"}, line)
    assert heard[:2] == [{"progress": 10}, {"progress": 90, "env": "j1"}]
    assert result.answer == heard[-1] == {"status_details": {"got": {"x": 1}}}
    assert failure in result.failure and bool(result.failure) == bool(failure)


async def test_a_reporting_program_past_its_time_is_killed() -> None:
    async def line(said: dict[str, object]) -> None:
        return None

    program = [PY, "-c", "import time; time.sleep(600)"]
    result = await handler.run_lines(program, {}, 2.0, {}, line)
    assert result.timed_out and "not done within 2 s" in result.failure
