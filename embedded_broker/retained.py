"""Retained messages: the last message of each topic published with the retain flag,
given to every new subscription whose filter matches it (MQTT-3.3.1-6).

Kept in memory as a tree of topic levels (a filter is matched by walking the tree, not by
testing every retained topic) and in the database through a `RetainedStore`: a message
published at QoS 1 or 2 is committed before the publisher's PUBACK or PUBREC, so an
acknowledged retained message survives a crash.

The tree is walked with a stack of its own, never by recursion: a topic 1,500 levels deep
(before topics were limited, embedded_broker/acl.py) raised RecursionError for every `#`
subscriber whose filter covered it. One stored before the limit is skipped at start.

Nothing is retained on a reserved topic (embedded_broker/acl.py, RESERVED); one stored
before the topic was reserved is skipped at start (migration 0026 deletes them) and never
matched, so a forged command or twin delta cannot reach a device as the server's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Iterable
from typing import Protocol

from embedded_broker import acl
from embedded_broker.frames import Message

log = logging.getLogger("edge.mqtt")


class StoredRetained(Protocol):
    @property
    def topic(self) -> str: ...

    @property
    def payload(self) -> bytes: ...

    @property
    def qos(self) -> int: ...

    @property
    def account_id(self) -> str | None: ...


class RetainedStore(Protocol):
    def save(self, topic: str, payload: bytes, qos: int, account_id: str | None) -> Awaitable[None]:
        """Queue the write at once (writes commit in call order); an empty payload deletes.
        `account_id`: who published it (None: the server, or unknown)."""
        ...

    def load(self) -> Iterable[StoredRetained]: ...


class _Node:
    __slots__ = ("children", "message", "owner")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.message: Message | None = None
        self.owner: str | None = None  # the account that published the message


class RetainedMessages:
    def __init__(self, store: RetainedStore) -> None:
        self._store = store
        self._root = _Node()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def load(self) -> dict[str, int]:
        """Read every stored message; returns the bytes each account retains."""
        owned: dict[str, int] = {}
        for record in self._store.load():
            if acl.too_deep(record.topic):
                log.warning(
                    "mqtt: a retained message stored on a topic over the limits (%d levels,"
                    " %d bytes) is skipped: %.80r...",
                    record.topic.count("/") + 1,
                    len(record.topic.encode("utf-8")),
                    record.topic,
                )
                continue
            if acl.reserved_owner(record.topic) is not None:
                log.warning(
                    "mqtt: a retained message on a reserved topic is skipped: %.200r",
                    record.topic,
                )
                continue
            message = Message.of(record.topic, record.payload, record.qos)
            self._put(message, record.account_id)
            if record.account_id is not None:
                owned[record.account_id] = owned.get(record.account_id, 0) + message.size
        return owned

    def set(self, message: Message, owner: str | None) -> Awaitable[None]:
        """Remember (or, for an empty payload, forget) the topic's retained message; the
        returned awaitable completes when the change is committed."""
        if message.payload:
            self._put(message, owner)
        else:
            self._drop(message.topic)
        return self._store.save(message.topic, message.payload, message.qos, owner)

    def held(self, topic: str) -> tuple[str | None, int]:
        """Who retains the topic's message and its size ((None, 0) when none is)."""
        node: _Node | None = self._root
        for level in topic.split("/"):
            node = node.children.get(level) if node is not None else None
        if node is None or node.message is None:
            return None, 0
        return node.owner, node.message.size

    def matching(self, topic_filter: str) -> list[Message]:
        """The retained messages a new subscription to `topic_filter` gets: never one on a
        reserved topic, which only the server (or the device, to the server) publishes on
        and nothing is retained on (one stored before the topic was reserved)."""
        found = _collect(self._root, topic_filter.split("/"))
        return [m for m in found if acl.reserved_owner(m.topic) is None]

    def _put(self, message: Message, owner: str | None) -> None:
        node = self._root
        for level in message.topic.split("/"):
            node = node.children.setdefault(level, _Node())
        self._count += node.message is None
        node.message, node.owner = message, owner

    def _drop(self, topic: str) -> None:
        path, levels = [self._root], topic.split("/")
        for level in levels:
            child = path[-1].children.get(level)
            if child is None:
                return
            path.append(child)
        if path[-1].message is None:
            return
        path[-1].message = None
        self._count -= 1
        for depth in range(len(levels), 0, -1):
            if path[depth].message is not None or path[depth].children:
                return
            del path[depth - 1].children[levels[depth - 1]]


def _collect(root: _Node, levels: list[str]) -> list[Message]:
    """The messages of the topics a filter matches, in tree order."""
    found: list[Message] = []
    stack = [(root, 0)]
    while stack:
        node, i = stack.pop()
        if i == len(levels):
            if node.message is not None:
                found.append(node.message)
            continue
        level = levels[i]
        if level == "#":
            found.extend(_everything(node, skip_dollar=i == 0))
        elif level == "+":
            children = reversed(node.children.items())  # popped in the tree's order
            stack.extend((c, i + 1) for n, c in children if not (i == 0 and n.startswith("$")))
        elif (literal := node.children.get(level)) is not None:
            stack.append((literal, i + 1))
    return found


def _everything(top: _Node, skip_dollar: bool) -> list[Message]:
    """`#` matches the level it stands under and all below (MQTT-4.7.1-2); `$` topics
    only when the filter names their first level."""
    found: list[Message] = []
    stack = [(top, skip_dollar)]
    while stack:
        node, skip = stack.pop()
        if node.message is not None:
            found.append(node.message)
        children = reversed(node.children.items())
        stack.extend((c, False) for n, c in children if not (skip and n.startswith("$")))
    return found
