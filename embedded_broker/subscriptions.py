"""Who receives a topic: a tree of topic filters, level by level, with `+` and `#` as
children of their own.

amqtt matches every published topic against every subscribed filter in turn; the tree
walks only the levels of the topic (at most three branches per level: the literal
level, `+` and `#`), and the answer for a topic is kept until a subscription changes,
so a steady stream to the same topics costs one dictionary lookup each.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

S = TypeVar("S", bound=Hashable)
CACHE_TOPICS = 4096


class _Node(Generic[S]):
    __slots__ = ("children", "subscribers")

    def __init__(self) -> None:
        self.children: dict[str, _Node[S]] = {}
        self.subscribers: dict[S, int] = {}


class SubscriptionTree(Generic[S]):
    def __init__(self) -> None:
        self._root: _Node[S] = _Node()
        self._cache: dict[str, list[tuple[S, int]]] = {}

    def add(self, subscriber: S, topic_filter: str, qos: int) -> None:
        """Subscribe, or replace the QoS of the same filter (MQTT-3.8.4-3)."""
        node = self._root
        for level in topic_filter.split("/"):
            node = node.children.setdefault(level, _Node())
        node.subscribers[subscriber] = qos
        self._cache.clear()

    def remove(self, subscriber: S, topic_filter: str) -> bool:
        path = [self._root]
        levels = topic_filter.split("/")
        for level in levels:
            child = path[-1].children.get(level)
            if child is None:
                return False
            path.append(child)
        if path[-1].subscribers.pop(subscriber, None) is None:
            return False
        self._prune(path, levels)
        self._cache.clear()
        return True

    def match(self, topic: str) -> list[tuple[S, int]]:
        """Each subscriber whose filters match, once, with the highest QoS among them
        (MQTT-3.3.5-1)."""
        found = self._cache.get(topic)
        if found is None:
            best: dict[S, int] = {}
            _walk(self._root, topic.split("/"), best, topic.startswith("$"))
            found = list(best.items())
            if len(self._cache) >= CACHE_TOPICS:
                self._cache.clear()
            self._cache[topic] = found
        return found

    @staticmethod
    def _prune(path: list[_Node[S]], levels: list[str]) -> None:
        for depth in range(len(levels), 0, -1):
            node = path[depth]
            if node.subscribers or node.children:
                return
            del path[depth - 1].children[levels[depth - 1]]


def _walk(root: _Node[S], levels: list[str], best: dict[S, int], dollar: bool) -> None:
    """Every node the topic's levels reach, with a stack of its own (a topic may be as
    deep as embedded_broker/acl.py allows; recursion would be bounded by Python's)."""
    stack = [(root, 0)]
    while stack:
        node, i = stack.pop()
        wild = not (dollar and i == 0)  # `+` and `#` never match a leading `$` (MQTT-4.7.2-1)
        children = node.children
        rest = children.get("#") if wild else None
        if rest is not None:  # `a/#` matches `a` itself and everything below it
            _merge(best, rest.subscribers)
        if i == len(levels):
            _merge(best, node.subscribers)
            continue
        child = children.get(levels[i])
        if child is not None:
            stack.append((child, i + 1))
        plus = children.get("+") if wild else None
        if plus is not None:
            stack.append((plus, i + 1))


def _merge(best: dict[S, int], subscribers: dict[S, int]) -> None:
    for subscriber, qos in subscribers.items():
        if best.get(subscriber, -1) < qos:
            best[subscriber] = qos
