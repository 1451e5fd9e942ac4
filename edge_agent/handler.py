"""Running a device maker's program: the agent's way to hand work to the device.

The program (a list: the executable and its arguments, never a shell line) gets one JSON
object on standard input and answers with one JSON object on standard output; its
standard error goes to the agent's, for the device's log. It runs with the agent's user
and environment, and is killed past its time. The outcome is a `Result`: the object
it printed, or why there is none (it could not start, timed out, exited non-zero, or
printed something that is not a JSON object).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]
Line = Callable[[Json], Awaitable[None]]
MAX_OUTPUT = 1024 * 1024  # bytes of standard output read; a handler that says more failed


@dataclass(frozen=True)
class Result:
    answer: Json | None  # what the program printed, when it succeeded ({}: nothing);
    # `run_lines`: the last object printed, also when it failed
    failure: str = ""  # why not, for the log and the reply
    exit_code: int | None = None
    printed: bool = False  # it printed an object (not nothing at all)
    timed_out: bool = False


async def run(program: list[str], given: Json, timeout: float) -> Result:
    try:
        process = await asyncio.create_subprocess_exec(
            *program,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=MAX_OUTPUT,
        )
    except OSError as failed:
        return Result(None, f"{program[0]}: cannot start: {failed.strerror or failed}")
    try:
        async with asyncio.timeout(timeout):
            out, _ = await process.communicate(json.dumps(given).encode())
    except TimeoutError:
        return Result(None, f"{program[0]}: no answer within {timeout:g} s", timed_out=True)
    finally:  # timed out, or the agent stops: the program does not outlive its question
        if process.returncode is None:
            await _kill(process)
    return _outcome(program[0], process.returncode, out)


async def run_lines(
    program: list[str], given: Json, timeout: float, env: dict[str, str], line: Line
) -> Result:
    """As `run`, for a program that reports as it goes: each line it prints that is a JSON
    object is handed to `line` as it comes (other lines are ignored), and the last such
    object is the answer. `env` is added to the agent's environment."""
    try:
        process = await asyncio.create_subprocess_exec(
            *program,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=MAX_OUTPUT,
            env={**os.environ, **env},
        )
    except OSError as failed:
        return Result(None, f"{program[0]}: cannot start: {failed.strerror or failed}")
    assert process.stdin is not None and process.stdout is not None
    last: Json = {}
    try:
        async with asyncio.timeout(timeout):
            process.stdin.write(json.dumps(given).encode())
            process.stdin.close()
            while raw := await process.stdout.readline():
                said = _object(raw)
                if said is not None:
                    last = said
                    await line(said)
            await process.wait()
    except TimeoutError:
        return Result(None, f"{program[0]}: not done within {timeout:g} s", timed_out=True)
    except (ValueError, ConnectionError):  # a line past MAX_OUTPUT; stdin closed early
        return Result(None, f"{program[0]}: printed a line too long", process.returncode)
    finally:
        if process.returncode is None:
            await _kill(process)
    if process.returncode != 0:
        return Result(
            last, f"{program[0]}: exited with code {process.returncode}", process.returncode
        )
    return Result(last, "", 0, printed=bool(last))


def _object(raw: bytes) -> Json | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _outcome(name: str, code: int | None, out: bytes) -> Result:
    if code != 0:
        return Result(None, f"{name}: exited with code {code}", code)
    if not out.strip():
        return Result({}, "", code)
    try:
        answer = json.loads(out)
    except ValueError:
        return Result(None, f"{name}: printed something that is not JSON", code)
    if not isinstance(answer, dict):
        return Result(None, f"{name}: printed JSON that is not an object", code)
    return Result(answer, "", code, printed=True)


async def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    await process.wait()
