"""Logging: plain text for a terminal, or one JSON object per line for a log collector."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            entry["request_id"] = request_id
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry)


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


def setup(fmt: str, level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    logging.getLogger("aiohttp.server").addFilter(MalformedRequestFilter())
