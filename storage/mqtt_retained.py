"""The MQTT broker's retained messages: the latest message of each topic published with
the retain flag, kept so that a restart (or a crash after the acknowledgement) loses none.

Writes go through the one group-committing writer: a QoS 1/2 publisher waits for the
commit before its acknowledgement, and many such waits share one fsync.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import apsw

from storage.database import Database


@dataclass(frozen=True)
class RetainedRecord:
    topic: str
    payload: bytes
    qos: int
    account_id: str | None = None  # who published it (None: retained before 0020)


def put(conn: apsw.Connection, record: RetainedRecord, now: str) -> None:
    conn.execute(
        "INSERT INTO mqtt_retained (topic, payload, qos, updated_at, account_id)"
        " VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (topic) DO UPDATE SET payload = excluded.payload, qos = excluded.qos,"
        " updated_at = excluded.updated_at, account_id = excluded.account_id",
        (record.topic, record.payload, record.qos, now, record.account_id),
    )


def delete(conn: apsw.Connection, topic: str) -> None:
    conn.execute("DELETE FROM mqtt_retained WHERE topic = ?", (topic,))


def every(conn: apsw.Connection) -> list[RetainedRecord]:
    rows = conn.execute("SELECT topic, payload, qos, account_id FROM mqtt_retained ORDER BY topic")
    return [RetainedRecord(topic, bytes(p), qos, owner) for topic, p, qos, owner in rows]


class RetainedMessages:
    """The broker's durable store (embedded_broker.retained.RetainedStore)."""

    def __init__(self, db: Database, now: Callable[[], str]) -> None:
        self._db = db
        self._now = now

    def save(
        self, topic: str, payload: bytes, qos: int, account_id: str | None = None
    ) -> asyncio.Future[None]:
        """Queued at once, in call order; the future resolves when it is committed.
        An empty payload removes the topic's retained message (MQTT-3.3.1-10)."""
        if not payload:
            return self._db.submit(lambda conn: delete(conn, topic))
        record, now = RetainedRecord(topic, payload, qos, account_id), self._now()
        return self._db.submit(lambda conn: put(conn, record, now))

    def load(self) -> list[RetainedRecord]:
        return self._db.read(every)
