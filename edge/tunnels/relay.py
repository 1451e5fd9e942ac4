"""The relay: live tunnels, their device end's control channel, and their streams.

A stream is one TCP connection carried through a tunnel: the client's end opens it (one
WebSocket per connection), the relay asks the device's agent over its control channel to
open the named service, the agent answers with a WebSocket of its own for that stream, and
the relay moves bytes between the two (`Pipe`s, so nothing here knows HTTP). Binary frames
are data; the text frame `eof` says one side finished sending (TCP half-close) and is
passed on as it is.

Back-pressure: a pump reads its next chunk only once the previous one was handed to the
other end (whose send waits for its socket to drain) and the tunnel's byte rate allows it,
so a slow end stops the other's reads and TCP pushes back on the sender; what a stream holds
is bounded by the WebSocket buffers, whatever the rate of the fast end.

A tunnel is dropped, both ends and every stream at once, when it is closed here, at its
expiry (a timer), or when the watch (`run`, once a second while tunnels are live) finds it
closed elsewhere, expired by the clock, or its device suspended or deleted. The same watch
closes streams idle for longer than the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from edge.kernel import clock
from edge.kernel.errors import NotFound, Unavailable
from edge.tunnels.limits import Bucket, Limits
from storage.records import Tunnel

log = logging.getLogger("edge.tunnels")
WATCH_SECONDS = 1.0
EOF_FRAME = "eof"
Frame = bytes | str


class Pipe(Protocol):
    """One end of a stream: frames in, frames out. `receive` gives None once it closed."""

    async def receive(self) -> Frame | None: ...

    async def send(self, frame: Frame) -> None: ...

    async def close(self, reason: str) -> None: ...


class Control(Protocol):
    """The agent's control channel of one tunnel."""

    async def send_json(self, message: dict[str, Any]) -> None: ...

    async def close(self, reason: str) -> None: ...


@dataclass(eq=False)
class Stream:
    id: str
    tunnel_id: str
    service: str
    device_end: asyncio.Future[Pipe]
    last_activity: float
    pipes: list[Pipe] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    bytes_up: int = 0
    bytes_down: int = 0


@dataclass(eq=False)
class Live:
    tunnel: Tunnel
    bucket: Bucket
    control: Control | None = None
    control_ready: asyncio.Event = field(default_factory=asyncio.Event)
    streams: dict[str, Stream] = field(default_factory=dict)
    expiry: asyncio.TimerHandle | None = None


class DeviceRefused(Unavailable):
    """The agent could not open the service on its side."""


# The tunnels of these IDs that are still open (closed_date unset, not expired, device
# active): asked by the watch.
StillOpen = Callable[[list[str]], set[str]]


class Hub:
    def __init__(self, limits: Limits, still_open: StillOpen) -> None:
        self.limits = limits
        self._still_open = still_open
        self.live: dict[str, Live] = {}
        self._ids = itertools.count(1)
        self._expiring: set[asyncio.Task[None]] = set()  # kept until done

    def figures(self) -> tuple[int, int]:
        """Tunnels whose device end is connected, and open streams (GET /metrics)."""
        live = list(self.live.values())
        return sum(1 for item in live if item.control is not None), sum(
            len(item.streams) for item in live
        )

    # -- the device's end --------------------------------------------------------------------
    def attach_agent(self, tunnel: Tunnel, control: Control) -> Control | None:
        """The agent's control channel; returns the one it replaces (to be closed)."""
        live = self._live(tunnel)
        old, live.control = live.control, control
        live.control_ready.set()
        log.info("tunnel %s: device %s connected", tunnel.id, tunnel.device_id)
        return old

    def detach_agent(self, tunnel_id: str, control: Control) -> None:
        live = self.live.get(tunnel_id)
        if live is not None and live.control is control:
            live.control = None
            live.control_ready.clear()
            log.info("tunnel %s: device disconnected", tunnel_id)
            self._forget_if_unused(live)

    def waiting_stream(self, tunnel_id: str, stream_id: str) -> Stream:
        """The stream the device's new WebSocket is for; NotFound if none waits for it."""
        stream = self._stream(tunnel_id, stream_id)
        if stream is None or stream.device_end.done():
            raise NotFound("No stream of this tunnel waits for the device")
        return stream

    def attach_device(self, stream: Stream, pipe: Pipe) -> bool:
        """The device's end of a waiting stream; False when it no longer waits (it timed
        out or the tunnel dropped while the WebSocket was being accepted)."""
        if self._stream(stream.tunnel_id, stream.id) is not stream or stream.device_end.done():
            return False
        stream.device_end.set_result(pipe)
        return True

    def _stream(self, tunnel_id: str, stream_id: str) -> Stream | None:
        live = self.live.get(tunnel_id)
        return live.streams.get(stream_id) if live is not None else None

    def refused(self, tunnel_id: str, stream_id: str, reason: str) -> None:
        """The agent could not open the service for this stream."""
        stream = self._stream(tunnel_id, stream_id)
        if stream is not None and not stream.device_end.done():
            refusal = f"The device could not open {stream.service}: {reason}"
            stream.device_end.set_exception(DeviceRefused(refusal))

    # -- the client's end ------------------------------------------------------------------
    async def open_stream(self, tunnel: Tunnel, service: str) -> Stream:
        """A stream whose device end is connected, ready for `relay`."""
        live = self._live(tunnel)
        if len(live.streams) >= self.limits.max_streams:
            raise Unavailable(f"This tunnel has its maximum of {self.limits.max_streams} streams")
        loop = asyncio.get_running_loop()
        stream = Stream(
            f"s{next(self._ids)}", tunnel.id, service, loop.create_future(), loop.time()
        )
        live.streams[stream.id] = stream
        try:
            await self._wait_for_device(live, stream)
        except BaseException:
            await self.drop_stream(stream, "the stream was not opened")
            raise
        return stream

    async def drop_stream(self, stream: Stream, reason: str) -> None:
        """A stream that will not be relayed: its device end (if any) is closed."""
        live = self.live.get(stream.tunnel_id)
        if live is not None and live.streams.get(stream.id) is stream:
            del live.streams[stream.id]
            self._forget_if_unused(live)
        if stream.device_end.done() and not stream.device_end.cancelled():
            if stream.device_end.exception() is None and not stream.pipes:
                stream.pipes.append(stream.device_end.result())
        elif not stream.device_end.done():
            stream.device_end.cancel()
        await self._finish(stream, reason)

    async def _wait_for_device(self, live: Live, stream: Stream) -> None:
        wait = self.limits.connect_seconds
        try:
            async with asyncio.timeout(wait):
                control = await self._agent_ready(live, stream)
                message = {"type": "stream", "stream": stream.id, "service": stream.service}
                await control.send_json(message)
                stream.pipes.append(await asyncio.shield(stream.device_end))
        except TimeoutError:
            if not live.control_ready.is_set():
                raise Unavailable("The device has not connected to this tunnel") from None
            raise Unavailable(f"The device did not open {stream.service} in time") from None

    async def _agent_ready(self, live: Live, stream: Stream) -> Control:
        """Until the agent's control channel is there (or the tunnel drops meanwhile)."""
        ready: asyncio.Future[Any] = asyncio.ensure_future(live.control_ready.wait())
        either: set[asyncio.Future[Any]] = {ready, stream.device_end}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if stream.device_end.done():
            stream.device_end.result()  # the drop's refusal
        if live.control is None:
            raise Unavailable("The device has not connected to this tunnel")
        return live.control

    async def relay(self, stream: Stream, client: Pipe) -> None:
        """Move bytes both ways until either end closes, then close both."""
        live = self.live.get(stream.tunnel_id)
        device = stream.pipes[0]
        stream.pipes.append(client)
        if live is None:  # dropped while the ends were connecting
            await self._finish(stream, "the tunnel was closed")
            return
        log.info("tunnel %s: stream %s to %s opened", stream.tunnel_id, stream.id, stream.service)
        up = asyncio.create_task(self._pump(live, stream, client, device, "up"))
        down = asyncio.create_task(self._pump(live, stream, device, client, "down"))
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Bookkeeping first, without awaiting: the handler running this may be
            # cancelled once its WebSocket closes.
            live.streams.pop(stream.id, None)
            self._forget_if_unused(live)
            for task in (up, down):
                task.cancel()
            log.info(
                "tunnel %s: stream %s closed (%d bytes up, %d down)",
                stream.tunnel_id,
                stream.id,
                stream.bytes_up,
                stream.bytes_down,
            )
            await self._finish(stream, "the other end closed")
            await asyncio.gather(up, down, return_exceptions=True)

    async def _pump(self, live: Live, stream: Stream, src: Pipe, dst: Pipe, way: str) -> None:
        loop = asyncio.get_running_loop()
        while True:
            frame = await src.receive()
            if frame is None:
                return
            stream.last_activity = loop.time()
            if isinstance(frame, str):
                if frame == EOF_FRAME:
                    await dst.send(frame)
                continue
            await live.bucket.take(len(frame))
            await dst.send(frame)
            if way == "up":
                stream.bytes_up += len(frame)
            else:
                stream.bytes_down += len(frame)

    async def _finish(self, stream: Stream, reason: str) -> None:
        """Close both ends once (a drop and the relay's own end may both ask)."""
        if stream.done.is_set():
            return
        stream.done.set()
        for pipe in stream.pipes:
            with contextlib.suppress(Exception):
                await pipe.close(reason)

    # -- dropping ------------------------------------------------------------------------
    async def drop(self, tunnel_id: str, reason: str) -> None:
        """Both ends of a tunnel and every stream, at once."""
        live = self.live.pop(tunnel_id, None)
        if live is None:
            return
        if live.expiry is not None:
            live.expiry.cancel()
        streams = list(live.streams.values())
        live.streams.clear()
        for stream in streams:
            if not stream.device_end.done():
                stream.device_end.set_exception(Unavailable("The tunnel was closed"))
        await asyncio.gather(*(self._finish(s, reason) for s in streams))
        if live.control is not None:
            with contextlib.suppress(Exception):
                await live.control.close(reason)
        log.info("tunnel %s dropped: %s (%d streams)", tunnel_id, reason, len(streams))

    async def run(self, stop: asyncio.Event) -> None:
        """The watch: tunnels closed elsewhere or expired, devices gone, idle streams."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), WATCH_SECONDS)
            try:
                await self.check()
            except Exception:
                log.exception("tunnels: the watch failed")
        await self.drop_all("the server is stopping")

    async def drop_all(self, reason: str) -> None:
        for tunnel_id in list(self.live):
            await self.drop(tunnel_id, reason)

    async def check(self) -> None:
        if not self.live:
            return
        ids = list(self.live)
        still = await asyncio.to_thread(self._still_open, ids)
        for tunnel_id in ids:
            if tunnel_id not in still:
                await self.drop(tunnel_id, "closed or expired")
        now = asyncio.get_running_loop().time()
        for live in list(self.live.values()):
            for stream in list(live.streams.values()):
                if stream.pipes and now - stream.last_activity >= self.limits.idle_seconds:
                    log.info("tunnel %s: stream %s idle, closed", live.tunnel.id, stream.id)
                    await self._finish(stream, "idle")

    # -- helpers -------------------------------------------------------------------------
    def _live(self, tunnel: Tunnel) -> Live:
        live = self.live.get(tunnel.id)
        if live is None:
            live = Live(tunnel, Bucket(self.limits.bytes_per_second))
            live.expiry = self._expiry_timer(tunnel)
            self.live[tunnel.id] = live
        return live

    def _expiry_timer(self, tunnel: Tunnel) -> asyncio.TimerHandle:
        loop = asyncio.get_running_loop()
        left = (clock.parse(tunnel.expires_date) - clock.now()).total_seconds()

        def expire() -> None:
            log.info("tunnel %s expired", tunnel.id)
            task = loop.create_task(self.drop(tunnel.id, "expired"))
            self._expiring.add(task)
            task.add_done_callback(self._expiring.discard)

        return loop.call_later(max(left, 0.0), expire)

    def _forget_if_unused(self, live: Live) -> None:
        """A tunnel with no agent and no stream needs no memory (nor timer) here."""
        if live.control is None and not live.streams and self.live.get(live.tunnel.id) is live:
            del self.live[live.tunnel.id]
            if live.expiry is not None:
                live.expiry.cancel()
