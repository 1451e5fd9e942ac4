"""The twin, from the device's side (docs/twins.md, docs/agent.md): `reported` kept in step
with a local JSON file, and `desired` applied through the device maker's program.

- After every connection it asks for the document (`twin/get`); with the answer it knows
  the server's `reported`, sends what the file says differently (one merge patch, a key the
  file lost as `null`), and applies the document's delta if there is one. This is how it
  catches up with what changed while it was away, beside the deltas its persistent session
  kept.
- It watches the file (every `poll_seconds`) and reports each change.
- A delta (`twin/update/delta`, or the document's) goes to `twin.apply` as
  `{"delta", "version", "reported"}` on its standard input. Exit code 0 means applied: what
  it prints, a JSON object, is merged into the file as what is now true (printing nothing
  means the delta as it came); then the file is reported. Any other outcome is logged and
  nothing is reported, so the twin keeps showing what is still to do (and the delta is
  tried again when it comes again: at the next connection, or with the next change). A
  delta of a version already applied is not applied again (a redelivery, or the same
  delta by two paths).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import Any

from edge_agent import handler, merge
from edge_agent.files import write_json
from edge_agent.link import Link, Message, say
from edge_agent.settings import Settings, TwinSettings

Json = dict[str, Any]


class Twin:
    name = "twin"

    def __init__(self, settings: Settings, twin: TwinSettings, link: Link) -> None:
        self.topic = f"{settings.namespace}/twin"
        self.settings = twin
        self.link = link
        self.server_reported: Json | None = None  # None until the server told us
        self.handled_version = -1
        self._tokens = 0
        self._watcher: asyncio.Task[None] | None = None
        self._seen: tuple[int, int] | None = None  # the file's (mtime, size) last read

    def filters(self) -> list[str]:
        return [f"{self.topic}/+/+"]  # the replies to get and update, and the delta

    async def connected(self) -> None:
        self._send("get", {})
        if self._watcher is None:
            self._watcher = asyncio.create_task(self._watch())

    async def handle(self, message: Message) -> None:
        try:
            body = json.loads(message.payload)
            what = message.topic.removeprefix(self.topic + "/")
            if isinstance(body, dict):
                await self._reply(what, body)
        except ValueError:
            say(f"twin: ignored a message that is not JSON on {message.topic}")
        finally:
            self.link.ack(message)

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher

    async def _reply(self, what: str, body: Json) -> None:
        if what in ("get/accepted", "update/accepted") and isinstance(body.get("reported"), dict):
            self.server_reported = body["reported"]
            self._report()
        if what in ("get/accepted", "update/delta") and isinstance(body.get("delta"), dict):
            if body["delta"]:
                await self._apply(body["delta"], body.get("version", 0))
        elif what.endswith("/rejected"):
            say(f"twin: the server refused {what.split('/')[0]}: {body.get('message', '')}")

    async def _apply(self, delta: Json, version: Any) -> None:
        if not isinstance(version, int) or version <= self.handled_version:
            return
        program = self.settings.apply
        if program is None:
            say(f"twin: version {version} has a delta, and no twin.apply program is set")
            self.handled_version = version
            return
        local = self._local() or {}
        given = {"delta": delta, "version": version, "reported": local}
        result = await handler.run(program, given, self.settings.timeout_seconds)
        if result.answer is None:
            say(f"twin: applying version {version} failed: {result.failure}")
            return
        self.handled_version = version
        now = merge.apply(local, result.answer if result.printed else delta)
        write_json(self.settings.reported_file, now)
        print(f"twin: applied version {version}", flush=True)
        self._report()

    def _report(self) -> None:
        """Sends what the file says that the server's `reported` does not."""
        local = self._local()
        if local is None or self.server_reported is None:
            return
        patch = merge.between(self.server_reported, local)
        if patch:
            self._send("update", {"reported": patch})
            self.server_reported = merge.apply(self.server_reported, patch)

    def _local(self) -> Json | None:
        """The file's object: {} when it is missing, None when it is not a JSON object
        (being written by someone who does not rename): then nothing is reported."""
        path: Path = self.settings.reported_file
        try:
            stat = path.stat()
            self._seen = (stat.st_mtime_ns, stat.st_size)
            value = json.loads(path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            say(f"twin: {path} is not a JSON object; not reported")
            return None
        return value if isinstance(value, dict) else None

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.settings.poll_seconds)
            with contextlib.suppress(OSError):
                stat = os.stat(self.settings.reported_file)
                if (stat.st_mtime_ns, stat.st_size) != self._seen:
                    self._report()

    def _send(self, request: str, body: Json) -> None:
        self._tokens += 1
        body = {**body, "client_token": f"agent-{self._tokens}"}
        self.link.publish(f"{self.topic}/{request}", json.dumps(body).encode())
