"""What every feature of the agent is to the agent (`agent.py`): the topic filters it
listens on under the device's own namespace, what it does after each connection (catch
up: ask for what it may have missed), and what it does with each message of its topics.

A feature acknowledges each message it was handed (`Link.ack`) once it has dealt with it,
so the broker delivers again what a crash interrupted; it publishes through the link.
Messages of one feature are handed to it one at a time, in the order they came; a feature
that works long on one (a command) starts a task of its own.
"""

from __future__ import annotations

from typing import Protocol

from edge_agent.link import Message


class Feature(Protocol):
    name: str  # the first level of its topics under the namespace: twin, commands, jobs, ...

    def filters(self) -> list[str]:
        """The topic filters to subscribe to, in full."""
        ...

    async def connected(self) -> None:
        """Called after every connection, once the subscriptions were granted."""
        ...

    async def handle(self, message: Message) -> None:
        """One message of its topics; acknowledge it once done."""
        ...

    async def close(self) -> None:
        """The agent stops: end what runs."""
        ...
