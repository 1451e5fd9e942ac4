"""Who may read which pulse (GET /v2/pulse, docs/pulse.md).

Staff read the site's totals, or one organization's counts when they name it. An org
admin reads their own organization's counts and nothing else: naming another
organization is refused the same way whether it exists or not. Disk free is the site's
disk, shared by every tenant: an org admin does not get it, since its movements tell of
other organizations' uploads and data (a side channel across tenants) and an org admin
can do nothing about it; staff can. Everyone else is refused.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from edge.access.engine import Permissions
from edge.kernel import clock
from edge.kernel.errors import Denied, NotFound, ValidationError
from edge.kernel.principal import Principal
from edge.pulse.sampler import INTERVAL_SECONDS
from storage import orgs
from storage import pulse as store
from storage.database import Database
from storage.pulse import Sample
from storage.rows import Tx

WINDOW = timedelta(hours=1)  # what is read when `since` is not given
# The most one answer covers: a day of one-minute samples. A longer reach back (the
# retention may be a year) is read a day at a time with `until`, so one request never
# holds a reader, or builds an answer, for the whole retention.
MOST = timedelta(hours=24)
MOST_SAMPLES = 1440
GAP_MS = 1000  # a sample starting later than this after the last one ended follows a gap
ADMINS_ONLY = "Only staff and org admins may read the pulse"
OWN_ORG_ONLY = "Org admins may read their own organization's pulse only"


class Pulse:
    def __init__(self, db: Database, permissions: Permissions, retention_hours: int) -> None:
        self._db = db
        self._permissions = permissions
        self.retention = timedelta(hours=retention_hours)

    async def series(
        self,
        principal: Principal,
        since: datetime | None = None,
        org_id: str | None = None,
        until: datetime | None = None,
    ) -> dict[str, Any]:
        """The samples from `since` (default: an hour before `until`; never before the
        retention) to `until` (default: now) of the site or of one organization, as this
        caller may read them: at most a day's span and MOST_SAMPLES samples (then `until`
        is the last one's end, where the next page starts). Read on a reader thread: a
        day of samples is too long a read for the event loop, which serves every tenant."""
        scope = self._scope(principal, org_id)
        now = clock.now()
        end = min(until or now, now)
        start = max(since or end - WINDOW, now - self.retention)
        if end - start > MOST:
            raise ValidationError(
                "since", "must be at most 24 hours before until (page with until)"
            )
        after, before = _ms(start), _ms(end)
        with_disk = principal.is_staff

        def read(c: Tx) -> tuple[int, list[dict[str, Any]]]:
            samples = store.series(c, scope or store.SITE, after, before, MOST_SAMPLES)
            full = len(samples) == MOST_SAMPLES
            return (samples[-1].ended if full else 0), _shown(samples, with_disk)

        last, shown = await self._db.scan(read)  # shown there too: a day is 1,440 dicts
        if last:
            end = datetime.fromtimestamp(last / 1000, UTC)
        return {
            "org_id": scope,
            "since": clock.iso(start),
            "until": clock.iso(end),
            "interval_seconds": int(INTERVAL_SECONDS),
            "retention_hours": int(self.retention.total_seconds() // 3600),
            "samples": shown,
        }

    def _scope(self, principal: Principal, org_id: str | None) -> str | None:
        """The organization read (None: the site's totals), or why not."""
        if principal.is_staff:
            if org_id is not None and self._db.read(lambda c: orgs.get(c, org_id)) is None:
                raise NotFound("Organization not found")
            return org_id
        if principal.org_id is None or not self._permissions.caller(principal).is_org_admin:
            raise Denied(ADMINS_ONLY)
        if org_id is not None and org_id != principal.org_id:
            raise Denied(OWN_ORG_ONLY)
        return principal.org_id


def _shown(samples: list[Sample], with_disk: bool) -> list[dict[str, Any]]:
    shown, last_end = [], None
    for s in samples:
        shown.append(_sample(s, last_end is not None and s.started > last_end + GAP_MS, with_disk))
        last_end = s.ended
    return shown


def _sample(s: Sample, after_gap: bool, with_disk: bool) -> dict[str, Any]:
    seconds = max(s.ended - s.started, 1) / 1000
    out: dict[str, Any] = {
        "start": _iso(s.started),
        "end": _iso(s.ended),
        "after_gap": after_gap,
        "requests": s.requests,
        "requests_per_second": round(s.requests / seconds, 3),
        "mqtt_messages": s.mqtt_messages,
        "mqtt_messages_per_second": round(s.mqtt_messages / seconds, 3),
        "sign_in_failures": s.sign_in_failures,
        "devices_online": s.devices_online,
    }
    if with_disk:
        out["disk_free_bytes"] = s.disk_free
    return out


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _iso(ms: int) -> str:
    return clock.iso(datetime.fromtimestamp(ms / 1000, UTC))
