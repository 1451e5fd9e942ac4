"""`edge tunnel connect` against a server that answers with something other than edge's
JSON (a proxy's HTML error page while edge restarts) or does not answer at all: refused at
start with one line, and a live tunnel is not taken for closed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web

from edge.tunnel_clients.connector import Connect, Connector, Refused
from tests.ports import free_port
from tests.waiting import eventually

Answer = Callable[[], web.Response]


def proxy(answers: list[Answer], asked: list[int]) -> web.Application:
    """Answers the tunnel's check with each of `answers` in turn, then the last for ever
    (each a new response: a response sent once is never sent again, its client waits);
    `asked` grows by one at each check."""

    async def check(request: web.Request) -> web.Response:
        asked.append(len(asked))
        return (answers.pop(0) if len(answers) > 1 else answers[0])()

    app = web.Application()
    app.router.add_get("/v2/tunnels/{tunnel_id}/connect", check)
    return app


def html_502() -> web.Response:
    return web.Response(status=502, text="<html>Bad Gateway</html>", content_type="text/html")


def offers_echo() -> web.Response:
    body = {"message": "service: this tunnel offers ECHO", "services": ["ECHO"]}
    return web.json_response(body, status=400)


async def connector(
    aiohttp_server: Any, answers: list[Answer], asked: list[int] | None = None
) -> Connector:
    server = await aiohttp_server(proxy(answers, [] if asked is None else asked))
    config = Connect(
        str(server.make_url("")), "t1", "etc_x", "ECHO", port=free_port(), check_every=0.05
    )
    return Connector(config)


async def test_an_html_error_page_at_start_is_one_refusal(aiohttp_server: Any) -> None:
    made = await connector(aiohttp_server, [html_502])
    with pytest.raises(Refused) as refused:
        await made.run(asyncio.Event())
    assert refused.value.code == 1 and "unexpected answer from the server (502)" in str(
        refused.value
    )


async def test_an_html_error_page_later_does_not_close_the_tunnel(
    aiohttp_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Open at start, then the proxy's 502 for every later check: the helper keeps
    listening (it used to print "closed or expired" and exit) until it is stopped."""
    asked: list[int] = []
    made = await connector(aiohttp_server, [offers_echo, html_502], asked)
    stop = asyncio.Event()
    running = asyncio.create_task(made.run(stop))
    # Ten checks answered by the 502 page, however long a loaded machine takes to make
    # them (a fixed half second may have seen none): the helper still runs.
    await eventually(lambda: len(asked) > 10 or running.done(), "ten checks after the first")
    assert not running.done()
    stop.set()
    await running
    assert "closed or expired" not in capsys.readouterr().out


async def test_the_services_are_read_from_their_field_not_the_message(
    aiohttp_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The message is for people and may be reworded or translated: the helper reads the
    Status payload's `services` (a reworded message once made it refuse a good tunnel)."""
    reworded = {"message": "service: one of ECHO; DEBUG", "services": ["ECHO", "DEBUG"]}
    made = await connector(aiohttp_server, [lambda: web.json_response(reworded, status=400)])
    stop = asyncio.Event()
    running = asyncio.create_task(made.run(stop))
    while "ECHO on" not in capsys.readouterr().out:  # listening: the tunnel was accepted
        assert not running.done(), running
        await asyncio.sleep(0.01)
    stop.set()
    await running


def stalling(answers: list[Answer | None], asked: list[int]) -> web.Application:
    """As `proxy`, but an answer of None takes the check and never answers it (a proxy
    whose upstream hangs)."""

    async def check(request: web.Request) -> web.Response:
        asked.append(len(asked))
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if answer is None:
            await asyncio.Event().wait()
        assert answer is not None
        return answer()

    app = web.Application()
    app.router.add_get("/v2/tunnels/{tunnel_id}/connect", check)
    return app


async def stalled_connector(
    aiohttp_server: Any, answers: list[Answer | None], asked: list[int]
) -> Connector:
    server = await aiohttp_server(stalling(answers, asked))
    config = Connect(
        str(server.make_url("")),
        "t1",
        "etc_x",
        "ECHO",
        port=free_port(),
        check_every=0.05,
        check_timeout=0.2,
    )
    return Connector(config)


def closed() -> web.Response:
    return web.json_response({"message": "The tunnel is closed"}, status=401)


async def test_a_check_never_answered_at_start_is_one_refusal(aiohttp_server: Any) -> None:
    """The helper used to wait aiohttp's five minutes for a proxy that took the check and
    never answered; it says so after `check_timeout` and exits."""
    made = await stalled_connector(aiohttp_server, [None], [])
    with pytest.raises(Refused) as refused:
        await asyncio.wait_for(made.run(asyncio.Event()), 20)
    assert refused.value.code == 1
    assert "no answer within 0.2 s" in str(refused.value)


async def test_checks_never_answered_later_do_not_hold_the_helper(aiohttp_server: Any) -> None:
    """Open at start, then two checks the proxy never answers, then the server says the
    tunnel is closed: each hung check is given up and the next one hears the closing."""
    asked: list[int] = []
    made = await stalled_connector(aiohttp_server, [offers_echo, None, None, closed], asked)
    await asyncio.wait_for(made.run(asyncio.Event()), 20)
    assert len(asked) == 4
