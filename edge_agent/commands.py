"""Commands with replies, from the device's side (docs/commands.md, docs/agent.md).

Each command (`commands/<request_id>`: `{"request_id", "name", "payload",
"expires_date"}`) goes as it came to `commands.handler` on its standard input; what the
handler prints, `{"status": <int>, "payload": {...}}`, is published as the reply on
`commands/<request_id>/reply`. A handler that prints nothing answers `{"status": 200}`;
one that fails answers status 500 (504 past `timeout_seconds`) with `{"error": why}`, so
the caller waiting on the server learns at once instead of waiting out its timeout.

Commands run side by side, at most `concurrency` at once (the rest wait their turn). A
command is acknowledged to the broker once its reply is published, so one the agent was
running when it died is delivered again when it is back; the request IDs of the last
`REMEMBERED` commands answered are kept, so a redelivered command is not run twice while
the agent runs.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import Any

from edge_agent import handler
from edge_agent.link import Link, Message, say
from edge_agent.settings import CommandSettings, Settings

REMEMBERED = 1000
Json = dict[str, Any]


class Commands:
    name = "commands"

    def __init__(self, settings: Settings, commands: CommandSettings, link: Link) -> None:
        self.topic = f"{settings.namespace}/commands"
        self.settings = commands
        self.link = link
        self._turns = asyncio.Semaphore(commands.concurrency)
        self._answered: OrderedDict[str, None] = OrderedDict()
        self._running: set[asyncio.Task[None]] = set()

    def filters(self) -> list[str]:
        return [f"{self.topic}/+"]

    async def connected(self) -> None:
        return None  # the persistent session delivers what came while away

    async def handle(self, message: Message) -> None:
        request_id = message.topic.removeprefix(self.topic + "/")
        if request_id in self._answered:
            self.link.ack(message)
            return
        task = asyncio.create_task(self._answer(request_id, message))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def close(self) -> None:
        for task in self._running:
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)

    async def _answer(self, request_id: str, message: Message) -> None:
        async with self._turns:
            reply = await self._run(message.payload)
        self.link.publish(f"{self.topic}/{request_id}/reply", json.dumps(reply).encode())
        self._remember(request_id)
        self.link.ack(message)
        print(f"command {request_id}: answered {reply['status']}", flush=True)

    async def _run(self, payload: bytes) -> Json:
        try:
            command = json.loads(payload)
        except ValueError:
            command = None
        if not isinstance(command, dict):
            return {"status": 400, "payload": {"error": "the command is not a JSON object"}}
        result = await handler.run(self.settings.handler, command, self.settings.timeout_seconds)
        if result.answer is None:
            say(f"command {command.get('name', '')!r}: {result.failure}")
            status = 504 if result.timed_out else 500
            return {"status": status, "payload": {"error": result.failure}}
        return _reply(result.answer) if result.printed else {"status": 200, "payload": {}}

    def _remember(self, request_id: str) -> None:
        self._answered[request_id] = None
        while len(self._answered) > REMEMBERED:
            self._answered.popitem(last=False)


def _reply(answer: Json) -> Json:
    """The handler's answer as a valid reply: an integer `status` (500 when it gave none
    that is) and an object `payload`."""
    status, payload = answer.get("status", 200), answer.get("payload", {})
    if isinstance(status, bool) or not isinstance(status, int):
        return {"status": 500, "payload": {"error": "the handler's status is not an integer"}}
    if not isinstance(payload, dict):
        return {"status": 500, "payload": {"error": "the handler's payload is not an object"}}
    return {"status": status, "payload": payload}
