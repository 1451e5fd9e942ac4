"""The MQTT broker's persistent sessions (clean session false), kept so that a restart of
the server finds them as MQTT 3.1.1 requires: subscriptions, QoS 2 identifiers not yet
released, and the QoS 1/2 messages in flight or waiting (docs/mqtt.md).

Writes go through the one group-committing writer, in call order: a session saved, then
messages appended while its client is away, then the session saved again or forgotten.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import apsw

from storage.database import Database


class StoredMessage(NamedTuple):
    """A QoS 1/2 message of a persistent session, in flight or waiting."""

    seq: int  # delivery order within the session
    packet_id: int | None  # set for a message in flight
    released: bool  # QoS 2 in flight: PUBREC received, PUBREL sent
    topic: str
    payload: bytes
    qos: int
    retain: bool


@dataclass(frozen=True)
class StoredSession:
    """A persistent session as it is stored and read back: the one record the broker
    writes (a snapshot of its session) and restores from."""

    key: str  # <account_id>:<client_id>
    kind: str
    account_id: str
    credential: str
    stamp: str
    subscriptions: dict[str, int]
    incoming_qos2: list[int]
    disconnected_at: float | None  # Unix time; None while connected
    messages: Sequence[StoredMessage]


_MESSAGE = (
    "INSERT INTO mqtt_session_messages"
    " (session_key, seq, packet_id, released, topic, payload, qos, retain)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def put_session(conn: apsw.Connection, session: StoredSession, replace_messages: bool) -> None:
    conn.execute(
        "INSERT INTO mqtt_sessions (session_key, kind, account_id, credential, stamp,"
        " subscriptions, incoming_qos2, disconnected_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (session_key) DO UPDATE SET kind = excluded.kind,"
        " account_id = excluded.account_id, credential = excluded.credential,"
        " stamp = excluded.stamp, subscriptions = excluded.subscriptions,"
        " incoming_qos2 = excluded.incoming_qos2, disconnected_at = excluded.disconnected_at",
        (
            session.key,
            session.kind,
            session.account_id,
            session.credential,
            session.stamp,
            json.dumps(session.subscriptions, sort_keys=True),
            json.dumps(sorted(session.incoming_qos2)),
            session.disconnected_at,
        ),
    )
    if replace_messages:
        conn.execute("DELETE FROM mqtt_session_messages WHERE session_key = ?", (session.key,))
        append(conn, session.key, session.messages)


def append(conn: apsw.Connection, key: str, messages: Iterable[StoredMessage]) -> None:
    conn.executemany(
        _MESSAGE,
        [
            (key, seq, packet_id, int(released), topic, payload, qos, int(retain))
            for seq, packet_id, released, topic, payload, qos, retain in messages
        ],
    )


def delete(conn: apsw.Connection, key: str) -> None:
    conn.execute("DELETE FROM mqtt_session_messages WHERE session_key = ?", (key,))
    conn.execute("DELETE FROM mqtt_sessions WHERE session_key = ?", (key,))


def every(conn: apsw.Connection) -> list[StoredSession]:
    messages: dict[str, list[StoredMessage]] = {}
    rows = conn.execute(
        "SELECT session_key, seq, packet_id, released, topic, payload, qos, retain"
        " FROM mqtt_session_messages ORDER BY session_key, seq"
    )
    for key, seq, packet_id, released, topic, payload, qos, retain in rows:
        stored = StoredMessage(
            seq, packet_id, bool(released), topic, bytes(payload), qos, bool(retain)
        )
        messages.setdefault(key, []).append(stored)
    sessions = conn.execute(
        "SELECT session_key, kind, account_id, credential, stamp, subscriptions, incoming_qos2,"
        " disconnected_at FROM mqtt_sessions ORDER BY session_key"
    )
    return [
        StoredSession(
            key,
            kind,
            account_id,
            credential,
            stamp,
            {str(f): int(q) for f, q in json.loads(subscriptions).items()},
            [int(i) for i in json.loads(incoming)],
            disconnected_at,
            messages.get(key, []),
        )
        for key, kind, account_id, credential, stamp, subscriptions, incoming, disconnected_at in (
            sessions
        )
    ]


class MqttSessions:
    """The broker's durable store of persistent sessions
    (embedded_broker.persistence.SessionStore)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def save(
        self, sessions: Sequence[StoredSession], replace_messages: bool
    ) -> asyncio.Future[None]:
        """Write the sessions (and, with `replace_messages`, their messages in place of the
        stored ones) in one transaction."""

        def write(conn: apsw.Connection) -> None:
            for session in sessions:
                put_session(conn, session, replace_messages)

        return self._db.submit(write)

    def append(self, key: str, message: StoredMessage) -> asyncio.Future[None]:
        return self._db.submit(lambda conn: append(conn, key, [message]))

    def forget(self, key: str) -> asyncio.Future[None]:
        return self._db.submit(lambda conn: delete(conn, key))

    def load(self) -> list[StoredSession]:
        return self._db.read(every)
