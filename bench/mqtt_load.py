"""The MQTT benchmark's load: processes of paho clients, each process driving all its
clients from one thread with select (no thread per client), and publishers held back by
what their subscribers have received (shared counters), so no queue grows and nothing
is dropped: the figure is the sustained end-to-end rate.
"""

from __future__ import annotations

import select
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.sharedctypes import Synchronized
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

PAYLOAD = b"x" * 100
READS_PER_WAKE = 64
CONNECT_SECONDS = 20.0


@dataclass(frozen=True)
class Login:
    client_id: str
    username: str | None = None
    password: str | None = None


def make(port: int, login: Login, tls: ssl.SSLContext | None = None) -> paho.Client:
    client = paho.Client(
        CallbackAPIVersion.VERSION2, client_id=login.client_id, protocol=paho.MQTTv311
    )
    if login.username is not None:
        client.username_pw_set(login.username, login.password)
    if tls is not None:
        client.tls_set_context(tls)
    client.max_inflight_messages_set(65000)
    client.max_queued_messages_set(0)
    done: list[int] = []
    client.on_connect = lambda c, u, f, code, p: done.append(code.value)
    client.connect("127.0.0.1", port, keepalive=60)
    deadline = time.monotonic() + CONNECT_SECONDS
    while not done and time.monotonic() < deadline:
        client.loop(0.01)
    if done != [0]:
        raise RuntimeError(f"{login.client_id} could not connect: {done}")
    return client


def subscribe(client: paho.Client, topic: str, qos: int) -> None:
    granted: list[int] = []
    client.on_subscribe = lambda c, u, mid, codes, p: granted.extend(x.value for x in codes)
    client.subscribe(topic, qos)
    while not granted:
        client.loop(0.01)
    if granted[0] > 2:
        raise RuntimeError(f"subscription to {topic} refused")


def subscribers(
    port: int,
    logins: Sequence[Login],
    topics: Sequence[str],
    slots: Sequence[int],
    qos: int,
    counts: Any,
    ready: Any,
    stop: Any,
) -> None:
    """Count what arrives; counts[slots[i]] is subscriber i's total."""
    local = [0] * len(logins)
    clients = []
    for i, (login, topic) in enumerate(zip(logins, topics, strict=True)):
        client = make(port, login)
        subscribe(client, topic, qos)
        client.on_message = _counter(local, i)
        clients.append(client)
    ready.release()
    sockets = {client.socket(): (i, client) for i, client in enumerate(clients)}
    while not stop.is_set():
        readable, _, _ = select.select(list(sockets), [], [], 0.05)
        for sock in readable:
            i, client = sockets[sock]
            for _ in range(READS_PER_WAKE):  # paho reads one packet a call
                before = local[i]
                client.loop_read()
                if local[i] == before:
                    break
            if client.want_write():
                client.loop_write()
            counts[slots[i]] = local[i]


def _counter(local: list[int], i: int) -> Any:
    def on_message(client: Any, userdata: Any, message: Any) -> None:
        local[i] += 1

    return on_message


def publishers(
    port: int,
    logins: Sequence[Login],
    topics: Sequence[str],
    watched: Sequence[Sequence[int]],
    qos: int,
    window: int,
    counts: Any,
    ready: Any,
    go: Any,
    stop: Any,
) -> None:
    """Publish to each topic as fast as the slowest subscriber watching it keeps up."""
    clients = [make(port, login) for login in logins]
    sent = [0] * len(clients)
    ready.release()
    go.wait()
    sockets = {client.socket(): client for client in clients}
    while not stop.is_set():
        progressed = False
        for i, client in enumerate(clients):
            budget = min(counts[j] for j in watched[i]) + window - sent[i]
            for _ in range(min(budget, 256)):
                client.publish(topics[i], PAYLOAD, qos)
            if budget > 0:
                sent[i] += min(budget, 256)
                progressed = True
        readable, _, _ = select.select(list(sockets), [], [], 0 if progressed else 0.001)
        for sock in readable:
            sockets[sock].loop_read()  # as many packets as it has messages in flight
        for client in clients:
            if client.want_write():
                client.loop_write()


def connectors(
    port: int, logins: Sequence[Login], tls: dict[str, str], total: Synchronized, stop: Any
) -> None:
    """Connect over TLS with a client certificate, wait for CONNACK, disconnect, again."""
    context = ssl.create_default_context(cafile=tls["ca"])
    context.load_cert_chain(tls["cert"], tls["key"])
    done = 0
    while not stop.is_set():
        client = make(port, logins[done % len(logins)], context)
        client.disconnect()
        client.loop(0.01)
        done += 1
        with total.get_lock():
            total.value += 1


def devices(
    port: int, logins: Sequence[Login], topics: Sequence[str], rate: float, ready: Any, stop: Any
) -> None:
    """A site's steady load: each client publishes QoS 1 messages at `rate` per second."""
    clients = [make(port, login) for login in logins]
    ready.release()
    interval, began = 1.0 / rate, time.monotonic()
    sockets = {client.socket(): client for client in clients}
    tick = 0
    while not stop.is_set():
        tick += 1
        for client, topic in zip(clients, topics, strict=True):
            client.publish(topic, PAYLOAD, 1)
        wake = began + tick * interval
        while (left := wake - time.monotonic()) > 0:
            readable, _, _ = select.select(list(sockets), [], [], left)
            for sock in readable:
                sockets[sock].loop_read()
        for client in clients:
            client.loop_misc()
