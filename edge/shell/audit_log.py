"""`edge audit list`: the audit log on the command line (docs/audit.md).

Read straight from the data folder, so it works beside a running server (a reader of a
WAL database never blocks its writer) and when the server is down. The operator sees
every event, as staff do; the newest `--limit` matching events are printed oldest first,
one line each, or one JSON object per line with `--json`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from edge.kernel import clock
from edge.kernel.audit import present
from edge.kernel.errors import ValidationError
from edge.kernel.listing import Filter, ListQuery
from edge.kernel.principal import Principal
from edge.services import Services
from storage import staff


@dataclass(frozen=True)
class Wanted:
    org: str | None = None
    action: str | None = None
    actor: str | None = None
    target: str | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 100


def events(services: Services, wanted: Wanted) -> list[dict[str, Any]]:
    """The newest matching events, oldest first."""
    if not 1 <= wanted.limit <= 1000:
        raise ValidationError("limit", "must be a whole number from 1 to 1000")
    filters = [*_equal(services, wanted), *_range(wanted)]
    query = ListQuery(limit=wanted.limit, desc=True, filters=tuple(filters))
    operator = Principal("staff", services.db.read(staff.first)["id"], None)
    page = asyncio.run(services.audit.list(operator, query))
    return [present(item) for item in reversed(page.rows)]


def _equal(services: Services, wanted: Wanted) -> list[Filter]:
    found = []
    if wanted.org:
        found.append(Filter("org_id", "eq", services.orgs.resolve_client(wanted.org, "org")["id"]))
    for name, value in (
        ("action", wanted.action),
        ("actor_id", wanted.actor),
        ("target_id", wanted.target),
    ):
        if value:
            found.append(Filter(name, "eq", value))
    return found


def _range(wanted: Wanted) -> list[Filter]:
    found = []
    for name, op, value in (("since", "gte", wanted.since), ("until", "lte", wanted.until)):
        if value:
            found.append(Filter("created_date", op, _moment(name, value, op)))
    return found


def _moment(name: str, text: str, op: str) -> str:
    """A date means its whole UTC day (`--until 2026-11-25` takes that day in)."""
    try:
        day = clock.day_bounds(text)
        if day is not None:
            return day[0] if op == "gte" else day[1]
        return clock.iso(clock.parse(text))
    except (ValueError, OverflowError):
        raise ValidationError(name, "must be an ISO 8601 date or time") from None


def line(event: dict[str, Any]) -> str:
    """One event on one line; a name stands beside its ID, as it was when written:
    `actor=user:<id>(ann)`."""
    actor = event["actor_kind"] + (f":{event['actor_id']}" if "actor_id" in event else "")
    actor += _named(event.get("actor_name"), event["actor_kind"])
    target = f"{event['target_kind']}:{event['target_id']}" if "target_id" in event else "-"
    target += _named(event.get("target_name"), "-") if "target_id" in event else ""
    details = json.dumps(event["details"], sort_keys=True) if event["details"] else ""
    return "  ".join(
        (
            event["created_date"],
            event["action"],
            f"actor={actor}",
            f"target={target}",
            f"org={event.get('org_id', '-')}",
            f"client={event.get('client', '-')}",
            details,
        )
    ).rstrip()


def _named(name: Any, same: str) -> str:
    return f"({name})" if name and name != same else ""
