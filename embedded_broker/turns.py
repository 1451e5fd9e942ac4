"""One CONNECT at a time per client ID (MQTT-3.1.4-2: a new connection with a client ID
in use closes the one holding it). A CONNECT takes its client ID's turn before it looks
at who holds the ID, and gives it back only once its own connection holds the ID (or it
failed): two CONNECTs racing one takeover otherwise both waited for the same holder and
both went on, leaving one connection outside the broker's session table, where
revocation never looked, or two connections resuming one amqtt session, which wedged
the client ID for good.

A turn is given back once, whoever gives it back first (the connection attached, its
refusal, its end); a client ID nobody waits for holds no lock.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass
class _Line:
    """The CONNECTs of one client ID: the lock they take in turn, and how many hold or
    wait for it (the line is dropped when none do)."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class Turn:
    """A CONNECT's turn at its client ID, held until `release` (idempotent)."""

    def __init__(self, turns: Turns, key: str) -> None:
        self._turns = turns
        self._key = key
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._turns.give_back(self._key)


class Turns:
    def __init__(self) -> None:
        self._lines: dict[str, _Line] = {}

    async def take(self, key: str) -> Turn:
        """Wait for the client ID's turn; a cancelled wait takes nothing."""
        line = self._lines.setdefault(key, _Line())
        line.users += 1
        try:
            await line.lock.acquire()
        except BaseException:
            self._leave(key, line)
            raise
        return Turn(self, key)

    def give_back(self, key: str) -> None:
        line = self._lines[key]
        line.lock.release()
        self._leave(key, line)

    def waiting(self) -> int:
        """CONNECTs holding or waiting for a turn (for tests: none once all are done)."""
        return sum(line.users for line in self._lines.values())

    def _leave(self, key: str, line: _Line) -> None:
        line.users -= 1
        if line.users == 0:
            del self._lines[key]
