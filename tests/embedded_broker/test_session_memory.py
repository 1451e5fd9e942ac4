"""A session's memory does not grow with the number of messages it has been sent.

Packet identifiers run from 1 to 65,535 and start again. They were drawn from
`itertools.cycle(range(1, 65536))`, which keeps a copy of every value it yields until the
range is spent: 2.5 MiB per session by its 65,535th QoS 1/2 message, and a steady creep of
the soak's server RSS (its four listeners each receive 75 messages a second)."""

from __future__ import annotations

import tracemalloc
from typing import Any

from embedded_broker.frames import Message
from embedded_broker.sessions import ClientSession, Limits, Stats


class _Link:
    """A connection that takes every byte and keeps none."""

    def send(self, data: bytes) -> None: ...

    def waiting(self) -> int:
        return 0


def a_session() -> ClientSession:
    limits = Limits(
        queue_messages=1000,
        queue_bytes=1 << 20,
        max_message_bytes=1 << 16,
        rate_limit=0,
        max_connections=10,
    )
    client: Any = None  # the session only keeps it
    session = ClientSession("device:client", client, limits, Stats())
    link: Any = _Link()
    session.attach(link)
    return session


def deliver(session: ClientSession, message: Message, count: int) -> list[int]:
    """`count` QoS 1 messages, each acknowledged at once; their packet identifiers."""
    ids = []
    for _ in range(count):
        session.offer(message, 1)
        [packet_id] = session.inflight
        session.acknowledged(packet_id)
        ids.append(packet_id)
    return ids


def test_packet_identifiers_run_to_65535_then_start_again_at_1() -> None:
    ids = deliver(a_session(), Message.of("t", b"x", 1), 65_537)
    assert ids[:2] == [1, 2]
    assert ids[65_533:] == [65_534, 65_535, 1, 2]


def test_memory_does_not_grow_with_the_messages_sent() -> None:
    session, message = a_session(), Message.of("t", b"x", 1)
    deliver(session, message, 1_000)  # warm
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        deliver(session, message, 20_000)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes kept after 20,000 messages"
