"""Log lines: malformed requests as one line, access lines in both formats, and the queue
that keeps a slow log sink from blocking the event loop."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
from aiohttp.http_exceptions import BadHttpMessage

from edge.kernel import logs
from edge.kernel.logs import MalformedRequestFilter


def test_parser_rejections_become_one_info_line() -> None:
    try:
        raise BadHttpMessage("Invalid header value char")
    except BadHttpMessage as exc:
        record = logging.LogRecord(
            "aiohttp.server",
            logging.ERROR,
            __file__,
            1,
            "Error handling request",
            (),
            (type(exc), exc, None),
        )
    assert MalformedRequestFilter().filter(record)
    assert record.levelno == logging.INFO and record.exc_info is None
    assert "Invalid header value char" in record.getMessage()


def test_real_errors_keep_their_traceback() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        record = logging.LogRecord(
            "aiohttp.server", logging.ERROR, __file__, 1, "x", (), (type(exc), exc, None)
        )
    assert MalformedRequestFilter().filter(record)
    assert record.levelno == logging.ERROR and record.exc_info is not None


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """logs.setup takes over the root logger: give pytest's handlers back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    flags = (logging.logThreads, logging.logProcesses, logging.logMultiprocessing)
    yield
    logs.shutdown()
    root.handlers[:], root.level = handlers, level
    logging.logThreads, logging.logProcesses, logging.logMultiprocessing = flags


def access_line(fmt: str) -> str:
    stream = io.StringIO()
    logs.setup(fmt, "info", stream)
    logs.access("GET", "/v2/groups/g1", 200, 1.234, "req-7", "127.0.0.1", "user-1")
    logs.shutdown()  # writes out what is queued
    return stream.getvalue()


def test_text_access_lines_carry_the_request_id(restored_logging: None) -> None:
    line = access_line("text")
    assert line.endswith("\n") and line.count("\n") == 1
    assert "INFO edge.access: GET /v2/groups/g1 200 1.2ms" in line
    assert "client=127.0.0.1 principal=user-1 request_id=req-7" in line


def test_json_access_lines_carry_each_field_apart(restored_logging: None) -> None:
    entry = json.loads(access_line("json"))
    assert entry["method"] == "GET" and entry["path"] == "/v2/groups/g1"
    assert entry["status"] == 200 and entry["duration_ms"] == 1.23
    assert entry["client"] == "127.0.0.1" and entry["principal"] == "user-1"
    assert entry["request_id"] == "req-7" and entry["logger"] == "edge.access"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"])


def test_the_access_log_can_be_silenced_by_level(restored_logging: None) -> None:
    stream = io.StringIO()
    logs.setup("text", "warning", stream)
    logs.access("GET", "/v2/health", 200, 0.1, "r", None, None)
    logs.shutdown()
    assert stream.getvalue() == ""


def test_tracebacks_cross_the_queue_whole(restored_logging: None) -> None:
    stream = io.StringIO()
    logs.setup("json", "info", stream)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("edge.http").exception("request %s failed", "r1")
    logs.shutdown()
    entry = json.loads(stream.getvalue())
    assert entry["message"] == "request r1 failed" and entry["level"] == "error"
    assert "RuntimeError: boom" in entry["traceback"]


def test_a_stalled_sink_drops_lines_and_counts_them() -> None:
    handoff = logs.Handoff(limit=2)
    for n in range(5):
        handoff.handle(logging.makeLogRecord({"msg": "line %d", "args": (n,)}))
    handoff.queue_access((0.0, "GET", "/v2/health", 200, 0.1, "r", None, None))
    assert handoff.dropped == 4
    stream = io.StringIO()
    writer = logs.Writer(handoff, stream, logs.TextFormatter())
    writer.start()
    writer.stop()
    lines = stream.getvalue().splitlines()
    assert [line.partition(": ")[2] for line in lines] == [
        "line 0",
        "line 1",
        "dropped 4 log lines: the log output was not keeping up",
    ]


@pytest.mark.parametrize("formatter", [logs.TextFormatter(), logs.JsonFormatter()])
@pytest.mark.parametrize("client", ["10.0.0.7", None])
def test_queued_access_lines_read_as_their_records_would(
    formatter: logs.LineFormatter, client: str | None
) -> None:
    """The writer formats queued access lines straight from their fields: the result must
    be what the logging record of the same line gives."""
    line = (1_700_000_000.25, "PATCH", "/v2/users/u1", 204, 12.345, "rid-1", client, "acct-1")
    assert formatter.access(line) == formatter.format(logs._record(line))


def test_json_access_lines_omit_what_is_unknown(restored_logging: None) -> None:
    stream = io.StringIO()
    logs.setup("json", "info", stream)
    logs.access("GET", "/v2/health", 200, 0.5, "req-8", None, None)
    logs.shutdown()
    entry = json.loads(stream.getvalue())
    assert "principal" not in entry and "client" not in entry and entry["status"] == 200


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_lines_logged_while_handling_a_request_carry_its_id(
    restored_logging: None, fmt: str
) -> None:
    stream = io.StringIO()
    logs.setup(fmt, "info", stream)
    logging.getLogger("edge.signin").warning("before any request")
    token = logs.current_request.set("req-42")
    try:
        logging.getLogger("edge.signin").warning("sign-in backing off")
    finally:
        logs.current_request.reset(token)
    logs.shutdown()
    outside, inside = stream.getvalue().splitlines()
    if fmt == "json":
        assert "request_id" not in json.loads(outside)
        assert json.loads(inside)["request_id"] == "req-42"
    else:
        assert "request_id" not in outside
        assert inside.endswith("edge.signin: sign-in backing off request_id=req-42")
