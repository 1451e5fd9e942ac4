"""The topic tree and the retained-message tree against MQTT 3.1.1's matching rules, the
hand-made PUBLISH encoding against amqtt's own decoder, and the amqtt methods the broker
overrides (a new amqtt must be checked before the pin moves)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Generator
from importlib.metadata import version

import pytest
from amqtt.adapters import BufferReader
from amqtt.broker import Broker
from amqtt.mqtt.protocol.broker_handler import BrokerProtocolHandler
from amqtt.mqtt.publish import PublishPacket

from embedded_broker.frames import Message, ProtocolError, next_frame
from embedded_broker.retained import RetainedMessages
from embedded_broker.subscriptions import SubscriptionTree

CASES = [
    ("sport/tennis/player1", "sport/tennis/player1/#", True),
    ("sport/tennis/player1/ranking", "sport/tennis/player1/#", True),
    ("sport", "sport/#", True),  # `#` includes the parent level
    ("sport/tennis", "sport/+", True),
    ("sport", "sport/+", False),
    ("sport/", "sport/+", True),
    ("/finance", "+/+", True),
    ("/finance", "/+", True),
    ("/finance", "+", False),
    ("a/b/c", "a/+/c", True),
    ("a/b/c/d", "a/+/c", False),
    ("a/b", "#", True),
    ("$SYS/monitor", "#", False),  # MQTT-4.7.2-1
    ("$SYS/monitor", "+/monitor", False),
    ("$SYS/monitor", "$SYS/#", True),
    ("a/b", "a/b", True),
    ("a/b", "a/c", False),
]


@pytest.mark.parametrize(("topic", "topic_filter", "matches"), CASES)
def test_subscription_tree_matches_as_mqtt_says(
    topic: str, topic_filter: str, matches: bool
) -> None:
    tree: SubscriptionTree[str] = SubscriptionTree()
    tree.add("s", topic_filter, 1)
    assert (tree.match(topic) == [("s", 1)]) is matches


@pytest.mark.parametrize(("topic", "topic_filter", "matches"), CASES)
def test_retained_tree_matches_as_mqtt_says(topic: str, topic_filter: str, matches: bool) -> None:
    retained = RetainedMessages(_NoStore())
    retained.set(Message.of(topic, b"x", 0), None)
    assert ([m.topic for m in retained.matching(topic_filter)] == [topic]) is matches


def test_the_tree_forgets_and_keeps_the_highest_qos() -> None:
    tree: SubscriptionTree[str] = SubscriptionTree()
    tree.add("a", "x/#", 0)
    tree.add("a", "x/+", 2)
    tree.add("b", "x/y", 1)
    assert sorted(tree.match("x/y")) == [("a", 2), ("b", 1)]
    assert tree.remove("a", "x/+") and not tree.remove("a", "x/+")
    assert sorted(tree.match("x/y")) == [("a", 0), ("b", 1)]  # the cached answer was dropped
    tree.remove("a", "x/#")
    tree.remove("b", "x/y")
    assert tree.match("x/y") == [] and not tree._root.children  # emptied branches pruned


@pytest.mark.parametrize(
    ("qos", "retain", "dup"), [(0, False, False), (1, True, False), (2, False, True)]
)
def test_publish_frames_decode_with_amqtt(qos: int, retain: bool, dup: bool) -> None:
    message = Message.of("a/tópico", b"p" * 300, qos)
    frame = message.head(qos, retain, dup) + (b"\x01\x02" if qos else b"") + message.payload
    packet = asyncio.run(PublishPacket.from_stream(BufferReader(frame)))
    assert (packet.topic_name, packet.data, packet.qos) == ("a/tópico", b"p" * 300, qos)
    assert (packet.retain_flag, packet.dup_flag) == (retain, dup)
    assert packet.packet_id == (0x0102 if qos else None)
    assert next_frame(frame, 0, 1000) == (3, len(frame))
    assert next_frame(frame[:-1], 0, 1000) is None  # not all here yet
    with pytest.raises(ProtocolError):
        next_frame(frame, 0, 100)  # over the limit, refused from its header


def test_the_amqtt_methods_we_override_are_still_there() -> None:
    assert version("amqtt") == "0.12.1"
    for cls, names in (
        (
            Broker,
            [
                "stream_connected",
                "ws_connected",
                "_create_server_instance",
                "_client_connected",
                "_initialize_client_session",
                "_handle_client_session",
                "_create_server_instance",
                "_authenticate",
                "_broadcast_message",
                "retain_message",
                "add_subscription",
                "_del_subscription",
                "_del_all_subscriptions",
                "_delete_session",
                "_cleanup_session",
                "create_offline_session",
                "shutdown",
            ],
        ),
        (
            BrokerProtocolHandler,
            [
                "_reader_loop",
                "mqtt_publish",
                "handle_disconnect",
                "handle_connection_closed",
                "init_from_connect",
                "stop",
            ],
        ),
    ):
        for name in names:
            assert callable(getattr(cls, name)), name
    assert "listener_name" in inspect.signature(Broker._handle_client_session).parameters


class _Done:
    def __await__(self) -> Generator[None, None, None]:
        yield from ()


class _NoStore:
    def save(self, topic: str, payload: bytes, qos: int, account_id: str | None) -> _Done:
        return _Done()

    def load(self) -> list[Message]:
        return []
