"""Reading a Server-Sent Events stream as a client does (GET /v2/events, docs/events.md):
events split on blank lines, comments skipped, `data` lines joined and read as JSON."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import aiohttp

from tests.world import World

SAFETY = 30.0  # seconds before a read that never ends fails the test (not a figure)


@dataclass(frozen=True)
class Event:
    kind: str
    id: int | None  # None: an event that moves no Last-Event-ID on (`end`)
    data: dict[str, Any]


class Events:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def next(self) -> Event | None:
        """The next event, or None once the stream has ended."""
        fields: dict[str, str] = {}
        data: list[str] = []
        while True:
            raw = await asyncio.wait_for(self.response.content.readline(), SAFETY)
            if not raw:
                return None
            line = raw.decode().rstrip("\r\n")
            if not line:
                if data:
                    event_id = int(fields["id"]) if "id" in fields else None
                    return Event(fields["event"], event_id, json.loads("\n".join(data)))
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            else:
                fields[name] = value

    async def rest(self) -> list[Event]:
        """Every event until the stream ends."""
        out = []
        while (event := await self.next()) is not None:
            out.append(event)
        return out

    def close(self) -> None:
        self.response.close()


async def open_stream(
    world: World, who: str, last_event_id: int | str | None = None, **query: str
) -> tuple[int, Events | Any]:
    """GET /v2/events as `who` (a new session of theirs): 200 and the stream, or the status
    and the error body."""
    return await open_with(world, await world.token(who), last_event_id, **query)


async def open_with(
    world: World, token: str | None, last_event_id: int | str | None = None, **query: str
) -> tuple[int, Events | Any]:
    """GET /v2/events with this bearer (None: none)."""
    assert world.api is not None
    headers = {"Accept": "text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    response = await world.api.client.get("/v2/events", params=query, headers=headers)
    if response.status != 200:
        return response.status, await response.json()
    return 200, Events(response)


async def stream_of(world: World, who: str, **query: str) -> Events:
    status, events = await open_stream(world, who, **query)
    assert status == 200, events
    assert isinstance(events, Events)
    return events


def end_streams(world: World) -> None:
    """End every open stream as the server does when it stops: what each had queued is
    still sent (if its reader may read it), then it closes."""
    world.site.services.live.streams.end_all()
