"""Retained messages: the last message of each topic published with the retain flag,
given to every new subscription whose filter matches it (MQTT-3.3.1-6).

Kept in memory as a tree of topic levels (a filter is matched by walking the tree, not by
testing every retained topic) and in the database through a `RetainedStore`: a message
published at QoS 1 or 2 is committed before the publisher's PUBACK or PUBREC, so an
acknowledged retained message survives a crash.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import Protocol

from embedded_broker.frames import Message


class StoredRetained(Protocol):
    @property
    def topic(self) -> str: ...

    @property
    def payload(self) -> bytes: ...

    @property
    def qos(self) -> int: ...


class RetainedStore(Protocol):
    def save(self, topic: str, payload: bytes, qos: int) -> Awaitable[None]:
        """Queue the write at once (writes commit in call order); an empty payload deletes."""
        ...

    def load(self) -> Iterable[StoredRetained]: ...


class _Node:
    __slots__ = ("children", "message")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.message: Message | None = None


class RetainedMessages:
    def __init__(self, store: RetainedStore) -> None:
        self._store = store
        self._root = _Node()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def load(self) -> None:
        for record in self._store.load():
            self._put(Message.of(record.topic, record.payload, record.qos))

    def set(self, message: Message) -> Awaitable[None]:
        """Remember (or, for an empty payload, forget) the topic's retained message; the
        returned awaitable completes when the change is committed."""
        if message.payload:
            self._put(message)
        else:
            self._drop(message.topic)
        return self._store.save(message.topic, message.payload, message.qos)

    def matching(self, topic_filter: str) -> list[Message]:
        found: list[Message] = []
        _collect(self._root, topic_filter.split("/"), 0, found)
        return found

    def _put(self, message: Message) -> None:
        node = self._root
        for level in message.topic.split("/"):
            node = node.children.setdefault(level, _Node())
        self._count += node.message is None
        node.message = message

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


def _collect(node: _Node, levels: list[str], i: int, found: list[Message]) -> None:
    if i == len(levels):
        if node.message is not None:
            found.append(node.message)
        return
    level = levels[i]
    if level == "#":
        _everything(node, found, skip_dollar=i == 0)
    elif level == "+":
        for name, child in node.children.items():
            if not (i == 0 and name.startswith("$")):
                _collect(child, levels, i + 1, found)
    elif (literal := node.children.get(level)) is not None:
        _collect(literal, levels, i + 1, found)


def _everything(node: _Node, found: list[Message], skip_dollar: bool) -> None:
    """`#` matches the level it stands under and all below (MQTT-4.7.1-2)."""
    if node.message is not None:
        found.append(node.message)
    for name, child in node.children.items():
        if not (skip_dollar and name.startswith("$")):
            _everything(child, found, skip_dollar=False)
