"""The typed hook every in-process event goes through (edge/kernel/events.py; #29): listeners in
the order added, each told of every event; a failing one is logged and the others still
run(presence's and twins' own use of it: tests/embedded_broker/test_presence.py and
tests/api/test_twins.py)."""

from __future__ import annotations

import logging

import pytest

from edge.kernel.events import Hook


def test_listeners_hear_every_event_in_the_order_they_were_added() -> None:
    hook: Hook[int] = Hook("numbers")
    heard: list[tuple[str, int]] = []
    hook.listen(lambda n: heard.append(("first", n)))
    hook.listen(lambda n: heard.append(("second", n)))
    hook.emit(1)
    hook.emit(2)
    assert heard == [("first", 1), ("second", 1), ("first", 2), ("second", 2)]


def test_a_failing_listener_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hook: Hook[str] = Hook("words")
    heard: list[str] = []

    def failing(word: str) -> None:
        raise RuntimeError("its own fault")

    hook.listen(failing)
    hook.listen(heard.append)
    with caplog.at_level(logging.ERROR, logger="edge.events"):
        hook.emit("hello")  # does not raise
    assert heard == ["hello"]
    assert "words: a listener failed on 'hello'" in caplog.text
    assert "its own fault" in caplog.text  # the traceback, for whoever fixes the listener


def test_an_event_nobody_listens_to_goes_nowhere() -> None:
    hook, heard = Hook[int]("quiet"), []
    hook.emit(1)
    hook.listen(heard.append)  # a listener added later hears only what follows
    hook.emit(2)
    assert heard == [2]
