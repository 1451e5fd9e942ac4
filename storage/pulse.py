"""The site's pulse (docs/pulse.md): one-minute samples, written by the flush and read by
GET /v2/pulse. A row of org_id '' (SITE) is the site's; each flush writes one, so the site's
rows say which minutes the server was sampling, and an organization's minute without a row
of its own counted nothing."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from storage.rows import Tx, many

SITE = ""
INSERT = (
    "INSERT OR REPLACE INTO pulse_samples (org_id, ended, started, requests, mqtt_messages,"
    " sign_in_failures, devices_online, disk_free) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
PRUNE = "DELETE FROM pulse_samples WHERE ended < ?"
# The site's rows are the timeline; an organization's counts are joined on their minute.
SERIES = (
    "SELECT s.started, s.ended, s.disk_free,"
    " coalesce(o.requests, 0) AS requests, coalesce(o.mqtt_messages, 0) AS mqtt_messages,"
    " coalesce(o.sign_in_failures, 0) AS sign_in_failures,"
    " coalesce(o.devices_online, 0) AS devices_online"
    " FROM pulse_samples AS s LEFT JOIN pulse_samples AS o ON o.org_id = ? AND o.ended = s.ended"
    " WHERE s.org_id = '' AND s.ended > ? AND s.ended <= ? ORDER BY s.ended LIMIT ?"
)


@dataclass(frozen=True, slots=True)
class Sample:
    """Counts over [started, ended] (milliseconds since the epoch) of one organization, or
    of the site (org_id SITE, the only one with disk_free)."""

    org_id: str
    started: int
    ended: int
    requests: int = 0
    mqtt_messages: int = 0
    sign_in_failures: int = 0
    devices_online: int = 0
    disk_free: int | None = None


def add(conn: Tx, samples: Iterable[Sample]) -> None:
    for s in samples:
        values = (s.requests, s.mqtt_messages, s.sign_in_failures, s.devices_online)
        conn.execute(INSERT, (s.org_id, s.ended, s.started, *values, s.disk_free))


def prune(conn: Tx, before: int) -> int:
    """Delete the samples that ended before `before`; how many."""
    conn.execute(PRUNE, (before,))
    return conn.changes()


def series(
    conn: Tx, org_id: str, after: int, until: int = 2**62, at_most: int = -1
) -> list[Sample]:
    """The samples that ended after `after` and by `until`, oldest first, at most `at_most`
    of them (-1: all): the site's (org_id SITE), or an organization's on the site's
    timeline (zeros where it counted nothing; disk_free is always the site's, for the
    caller to show or not)."""
    rows = many(conn, SERIES, (org_id, after, until, at_most))
    return [Sample(org_id, **row) for row in rows]
