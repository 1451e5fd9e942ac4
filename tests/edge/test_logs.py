"""Malformed requests are logged as one line, not as a server error with a traceback."""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import BadHttpMessage

from edge.logs import MalformedRequestFilter


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
