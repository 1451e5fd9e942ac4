"""Persistent sessions (clean session false) kept across restarts, as MQTT 3.1.1 says a
session outlives its connection: the broker writes through a `SessionStore`
(storage/mqtt_sessions.py) and reads everything back at start, as one record both ways:
storage's `StoredSession`, with its `StoredMessage`s.

What is written, and when (docs/mqtt.md):
- the session (owner, credential, subscriptions, QoS 2 identifiers not yet released) when
  it is created or resumed and whenever its subscriptions change: once per SUBSCRIBE or
  UNSUBSCRIBE packet, at most one such write waiting per session (Router.save_subscriptions);
- its QoS 1/2 messages in flight and waiting, in place of the stored ones, when its
  client goes away and when the broker stops;
- each QoS 1/2 message queued for it while its client is away, committed before the
  publisher's PUBACK or PUBREC (the same group commit as retained messages);
- nothing once it ends: a clean-session connection, expiry or revocation deletes it.
The stored queue is the in-memory one, so the same per-session bounds apply
(`mqtt_queue_messages`, `mqtt_queue_bytes`); past them a message is dropped and counted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Protocol

from storage.mqtt_sessions import StoredMessage, StoredSession


class SessionStore(Protocol):
    def save(self, sessions: Sequence[StoredSession], replace_messages: bool) -> Awaitable[None]:
        """Queue the write at once (writes commit in call order)."""
        ...

    def append(self, key: str, message: StoredMessage) -> Awaitable[None]: ...

    def forget(self, key: str) -> Awaitable[None]: ...

    def load(self) -> Sequence[StoredSession]: ...
