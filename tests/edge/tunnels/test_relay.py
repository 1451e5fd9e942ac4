"""The relay with stand-in ends: back-pressure (a slow end stops the other's reads), the
shared byte rate, dropping both ends at once, and the watch (expiry by the clock, tunnels
closed elsewhere, idle streams)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from edge.kernel import clock
from edge.kernel.errors import Unavailable
from edge.tunnels import limits as limits_module
from edge.tunnels.limits import Bucket, Limits
from edge.tunnels.relay import Frame, Hub, Stream
from storage.records import Tunnel


def tunnel(minutes: int = 60) -> Tunnel:
    now = clock.now()
    return Tunnel(
        id="t1",
        org_id="o",
        device_id="d",
        services=["SSH"],
        timeout_seconds=minutes * 60,
        client_token_hash="c",
        device_token_hash="d",
        sent_to=None,
        opened_date=clock.iso(now),
        opened_by="u",
        expires_date=clock.iso(now + timedelta(minutes=minutes)),
        closed_date=None,
        closed_by=None,
    )


class Source:
    """An end that always has another 64 KiB to send, and counts how often it was read."""

    def __init__(self) -> None:
        self.reads = 0
        self.closed: str | None = None
        self.gone = asyncio.Event()

    async def receive(self) -> Frame | None:
        if self.closed is not None:
            return None
        self.reads += 1
        return b"x" * 65536

    async def send(self, frame: Frame) -> None:
        await self.gone.wait()

    async def close(self, reason: str) -> None:
        self.closed = reason
        self.gone.set()


class Stuck(Source):
    """An end that never finishes taking a frame (a reader that stopped reading)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    async def receive(self) -> Frame | None:
        await self.gone.wait()
        return None

    async def send(self, frame: Frame) -> None:
        self.sent += 1
        await self.gone.wait()


class Control:
    def __init__(self, hub: Hub, device: Any) -> None:
        self.hub, self.device, self.closed = hub, device, False

    async def send_json(self, message: dict[str, Any]) -> None:
        stream = self.hub.waiting_stream("t1", message["stream"])
        assert self.hub.attach_device(stream, self.device)

    async def close(self, reason: str) -> None:
        self.closed = True


async def relayed(hub: Hub, client: Any, device: Any) -> tuple[Stream, asyncio.Task[None]]:
    control = Control(hub, device)
    hub.attach_agent(tunnel(), control)
    stream = await hub.open_stream(tunnel(), "SSH")
    return stream, asyncio.create_task(hub.relay(stream, client))


async def test_a_stuck_end_stops_the_reads_of_the_other() -> None:
    hub = Hub(Limits(), lambda ids: set(ids))
    client, device = Source(), Stuck()
    stream, task = await relayed(hub, client, device)
    for _ in range(200):
        await asyncio.sleep(0)
    # One frame is with the stuck end; nothing more was read: nothing piles up in between.
    assert device.sent == 1 and client.reads == 1
    await hub.drop("t1", "closed by a test")
    await task
    assert client.closed == device.closed == "closed by a test" and stream.done.is_set()
    assert hub.live == {}


async def test_drop_closes_the_control_channel_and_refuses_waiting_streams() -> None:
    hub = Hub(Limits(connect_seconds=30), lambda ids: set(ids))
    waiting = asyncio.create_task(hub.open_stream(tunnel(), "SSH"))  # no agent yet
    await asyncio.sleep(0)
    await hub.drop("t1", "expired")
    with pytest.raises(Unavailable, match="The tunnel was closed"):
        await waiting


async def test_the_watch_drops_expired_and_closed_tunnels(monkeypatch: Any) -> None:
    still: set[str] = {"t1"}
    hub = Hub(Limits(), lambda ids: {i for i in ids if i in still})
    client, device = Source(), Stuck()
    _, task = await relayed(hub, client, device)
    await hub.check()
    assert "t1" in hub.live
    still.clear()  # closed by another process, or past its expiry
    await hub.check()
    await task
    assert hub.live == {} and client.closed == "closed or expired"


async def test_the_watch_closes_idle_streams() -> None:
    hub = Hub(Limits(idle_seconds=0.0), lambda ids: set(ids))
    control_device = Stuck()
    stream, task = await relayed(hub, Stuck(), control_device)
    await hub.check()
    await task
    assert stream.done.is_set() and control_device.closed == "idle"
    assert "t1" in hub.live  # the tunnel stays: its agent is still connected


async def test_the_bucket_waits_off_what_was_taken_beyond_the_rate(monkeypatch: Any) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(limits_module.asyncio, "sleep", sleep)
    bucket = Bucket(1000)
    await bucket.take(1000)  # a full second's worth is there at the start
    assert waits == []
    await bucket.take(500)
    await bucket.take(500)
    assert len(waits) == 2 and waits[0] == pytest.approx(0.5, abs=0.05)
    assert waits[1] == pytest.approx(1.0, abs=0.05)  # the debts add up: the rate holds


async def test_no_rate_means_no_wait(monkeypatch: Any) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(limits_module.asyncio, "sleep", sleep)
    for _ in range(10):
        await Bucket(0).take(1 << 30)
    assert waits == []
