"""Logging: plain text for a terminal, or one JSON object per line for a log collector.

The event loop never formats or writes a log line itself: `setup` puts a bounded buffer in
front of stderr, and one thread formats what has gathered every FLUSH_SECONDS and writes it
with one write. A sink that stalls (a full pipe, a slow disk) cannot block request handling:
past QUEUE_LINES waiting lines, new ones are dropped and counted, and the count is logged
once the sink drains. (The standard QueueHandler formats and copies each record on the
calling thread, and its listener wakes per record and takes the GIL from the loop each time:
measured, that cost more than writing directly.)
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import sys
import threading
import time
from collections import deque
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO, Any

QUEUE_LINES = 10_000
FLUSH_SECONDS = 0.1
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
ACCESS_FORMAT = "%s %s %d %.1fms client=%s principal=%s request_id=%s"
# The fields of an access line, in JSON as their own keys (no token, no query string).
ACCESS_FIELDS = ("method", "path", "status", "duration_ms", "client", "principal")
_access = logging.getLogger("edge.access")
# The ID of the request being handled, set by the first middleware: every line logged while
# handling it (a throttle warning, a 500's traceback) carries it, so the access line, the
# warning and the audit event of one request can be joined. Tasks and threads started
# outside a request have none.
current_request: ContextVar[str | None] = ContextVar("request_id", default=None)


# An access line as the serving process queues it: created (time.time()), method, path,
# status, duration in ms, request ID, client address, account ID.
AccessLine = tuple[float, str, str, int, float, str, str | None, str | None]


def access(
    method: str,
    path: str,
    status: int,
    duration_ms: float,
    request_id: str,
    client: str | None,
    principal: str | None,
) -> None:
    """One line per request. While `setup` owns the output (`edge serve`), the line is queued
    as a tuple and formatted straight from it by the writer; a LogRecord would cost the loop
    more than the rest of the request path. Otherwise (tests, tools) it is a normal record."""
    if not _access.isEnabledFor(logging.INFO):
        return
    line = (time.time(), method, path, status, duration_ms, request_id, client, principal)
    if _writer is not None:
        _writer.handoff.queue_access(line)
    else:
        _access.handle(_record(line))


def _args(line: AccessLine) -> tuple[str, str, int, float, str, str, str]:
    """ACCESS_FORMAT's arguments, in the one order every way of writing the line uses."""
    _, method, path, status, duration_ms, request_id, client, principal = line
    return method, path, status, duration_ms, client or "-", principal or "-", request_id


def access_message(line: AccessLine) -> str:
    """The access line's message, built in one place for the record, text and JSON."""
    return ACCESS_FORMAT % _args(line)


def _record(line: AccessLine) -> logging.LogRecord:
    created, method, path, status, duration_ms, request_id, client, principal = line
    args = _args(line)
    record = _access.makeRecord(_access.name, logging.INFO, __file__, 0, ACCESS_FORMAT, args, None)
    record.created, record.msecs = created, int((created - int(created)) * 1000) + 0.0
    record.request_id = request_id
    record.method, record.path, record.status = method, path, status
    record.duration_ms = round(duration_ms, 2)
    record.client, record.principal = client, principal
    return record


def tag(record: logging.LogRecord) -> None:
    """The running request's ID on a record logged while handling it (on its own thread:
    the context is the request's)."""
    if getattr(record, "request_id", None) is None:
        found = current_request.get()
        if found is not None:
            record.request_id = found


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            entry["request_id"] = request_id
        for name in ACCESS_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                entry[name] = value
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry)

    def access(self, line: AccessLine) -> str:
        """The same object `format` makes of this line's record."""
        created, method, path, status, duration_ms, request_id, client, principal = line
        entry: dict[str, Any] = {
            "time": timestamp(created),
            "level": "info",
            "logger": _access.name,
            "message": access_message(line),
            "request_id": request_id,
            "method": method,
            "path": path,
            "status": status,
            "duration_ms": round(duration_ms, 2),
        }
        if client is not None:
            entry["client"] = client
        if principal is not None:
            entry["principal"] = principal
        return json.dumps(entry)


class TextFormatter(logging.Formatter):
    """TEXT_FORMAT, with the date and time part computed once per second, not per line."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)
        self._second = -1
        self._prefix = ""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return self._time(record.created)

    def formatMessage(self, record: logging.LogRecord) -> str:
        """A line logged while handling a request ends with its ID, as access lines do
        (before a traceback, which follows on the lines after)."""
        text = super().formatMessage(record)
        request_id = getattr(record, "request_id", None)
        if request_id and record.name != _access.name:
            return f"{text} request_id={request_id}"
        return text

    def access(self, line: AccessLine) -> str:
        """The same text `format` makes of this line's record."""
        return f"{self._time(line[0])} INFO {_access.name}: {access_message(line)}"

    def _time(self, created: float) -> str:
        second = int(created)
        if second != self._second:
            moment = self.converter(created)
            self._second, self._prefix = second, time.strftime(self.default_time_format, moment)
        return f"{self._prefix},{int((created - second) * 1000):03d}"


LineFormatter = JsonFormatter | TextFormatter


def timestamp(created: float) -> str:
    """UTC, ISO 8601 with milliseconds and `Z`, as every timestamp of the interface."""
    second = int(created)
    return f"{_utc_second(second)}.{int((created - second) * 1000):03d}Z"


@functools.lru_cache(maxsize=4)
def _utc_second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")


class MalformedRequestFilter(logging.Filter):
    """A request the HTTP parser rejects (400) is the client's fault, not a server error:
    log one line without the traceback, so nobody can fill the log by sending junk."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and any(
            c.__name__ == "HttpProcessingError" for c in type(error).__mro__
        ):
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = "rejected a malformed request: %s"
            record.args = (" ".join(str(error).split())[:300],)
            record.exc_info = record.exc_text = None
        return True


class Handoff(logging.Handler):
    """On the event loop: the message is merged with its arguments (they may change later)
    and the record appended to a bounded buffer as it is (the writer formats any traceback).
    A full buffer drops the record and counts it instead of waiting."""

    def __init__(self, limit: int = QUEUE_LINES) -> None:
        super().__init__()
        self.records: deque[logging.LogRecord | AccessLine] = deque()
        self.limit = limit
        self.dropped = 0  # counted by the threads that log; the writer only reads it

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) >= self.limit:
            self.dropped += 1
            return
        tag(record)
        if record.args:
            record.msg, record.args = record.getMessage(), None
        self.records.append(record)

    def queue_access(self, line: AccessLine) -> None:
        if len(self.records) >= self.limit:
            self.dropped += 1
        else:
            self.records.append(line)

    def handle(self, record: logging.LogRecord) -> bool:
        """Without the handler lock: appending to a deque is already thread-safe."""
        if self.filters and not self.filter(record):
            return False
        try:
            self.emit(record)
        except Exception:
            self.handleError(record)
        return True


class Writer:
    """The thread that formats buffered records and writes them, one write per batch,
    every FLUSH_SECONDS: waking per record would take the GIL from the loop each time."""

    def __init__(self, handoff: Handoff, stream: IO[str], formatter: LineFormatter) -> None:
        self.handoff = handoff
        self._stream = stream
        self._formatter = formatter
        self._reported = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="edge-log-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Write what is buffered, then end the thread."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        else:
            self._flush()

    def _run(self) -> None:
        while not self._stopping.wait(FLUSH_SECONDS):
            self._flush()
        self._flush()

    def _flush(self) -> None:
        records = self.handoff.records
        lines = []
        formatter = self._formatter
        while records:
            item = records.popleft()
            if isinstance(item, logging.LogRecord):
                lines.append(formatter.format(item) + "\n")
            else:
                lines.append(formatter.access(item) + "\n")
        lines += self._dropped()
        if lines:
            self._write("".join(lines))

    def _dropped(self) -> list[str]:
        dropped = self.handoff.dropped - self._reported
        if not dropped:
            return []
        self._reported += dropped
        record = logging.makeLogRecord(
            {
                "name": "edge.logs",
                "levelno": logging.WARNING,
                "levelname": "WARNING",
                "msg": f"dropped {dropped} log lines: the log output was not keeping up",
            }
        )
        return [self._formatter.format(record) + "\n"]

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # stderr closed or broken: nowhere left to say so
            pass


_writer: Writer | None = None


def setup(fmt: str, level: str, stream: IO[str] | None = None) -> Writer:
    """Route every log record through the queue to `stream` (stderr); returns the writer."""
    global _writer
    shutdown()
    formatter: LineFormatter = JsonFormatter() if fmt == "json" else TextFormatter()
    handoff = Handoff()
    _writer = Writer(handoff, stream or sys.stderr, formatter)
    _writer.start()
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    root = logging.getLogger()
    root.handlers[:] = [handoff]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    logging.getLogger("aiohttp.server").addFilter(MalformedRequestFilter())
    return _writer


def shutdown() -> None:
    """Write out what is queued and stop the writer (at exit, or before a new setup)."""
    global _writer
    if _writer is not None:
        logging.getLogger().removeHandler(_writer.handoff)
        _writer.stop()
        _writer = None


atexit.register(shutdown)
