"""A device maker's program run with JSON in and out (edge_agent/handler.py): every way it
can fail is a Result that says why, and a program past its time is killed, not left
behind."""

from __future__ import annotations

import os
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
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    result = await handler.run([PY, "-c", code], {}, timeout=3.0)
    assert result.timed_out and result.answer is None and "no answer within 3 s" in result.failure
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # killed and reaped
