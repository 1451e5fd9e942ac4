"""The staff-only ledger of an organization: entries, balance, usage summary and rates.

Staff credit points (a positive entry) or debit them by hand (a negative one); the meter
(`meter.py`) adds one `usage` debit per organization, closed day and meter. Amounts are
never edited: a wrong entry is deleted (staff entries) or answered by a new one.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from edge.billing import rates as pricing
from edge.kernel import clock, fields, ids
from edge.kernel.errors import Conflict, Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.tenancy.orgs import Orgs
from storage import billing as store
from storage.database import Database
from storage.records import BillingEntry

TABLE = store.LIST

MAX_POINTS = 10**12
MAX_DAYS = {"day": 366, "month": 3660}
STAFF_KINDS = ("credit", "debit")


def present(entry: BillingEntry) -> dict[str, Any]:
    """An entry as clients see it; meter, quantity and day only on usage debits."""
    shown = {
        "id": entry.id,
        "org_id": entry.org_id,
        "kind": entry.kind,
        "points": entry.points,
        "meter": entry.meter,
        "quantity": entry.quantity,
        "day": entry.day,
        "description": entry.description,
        "tags": entry.tags,
        "created_date": entry.created_date,
        "created_by": entry.created_by,
        "last_updated_date": entry.last_updated_date,
        "last_updated_by": entry.last_updated_by,
    }
    return {
        k: v for k, v in shown.items() if v is not None or k not in ("meter", "quantity", "day")
    }


class Billing:
    def __init__(self, db: Database, cursors: CursorCodec, orgs: Orgs) -> None:
        self._db = db
        self.cursors = cursors
        self._orgs = orgs

    def _org(self, principal: Principal, org_id: str) -> str:
        if not principal.is_staff:
            raise Denied("Only staff may manage billing points")
        return self._orgs.get_row(org_id).id

    def _entry(self, org_id: str, entry_id: str) -> BillingEntry:
        found = self._db.read(lambda c: store.get(c, org_id, entry_id))
        if found is None:
            raise NotFound("Billing point entry not found")
        return found

    # -- entries -------------------------------------------------------------------------
    async def create(self, principal: Principal, org_id: str, body: dict[str, Any]) -> str:
        org_id = self._org(principal, org_id)
        points = fields.integer("points", body.get("points"), -MAX_POINTS, MAX_POINTS)
        if points == 0:
            raise ValidationError("points", "must not be 0")
        now = clock.now_iso()
        entry = BillingEntry(
            id=ids.new_id(),
            org_id=org_id,
            kind="credit" if points > 0 else "debit",
            points=points,
            meter=None,
            quantity=None,
            day=None,
            description=_description(body.get("description", "")),
            tags=fields.tags("tags", body.get("tags", [])),
            created_date=now,
            created_by=principal.actor,
            last_updated_date=now,
            last_updated_by=principal.actor,
        )
        await self._db.write(lambda c: store.add(c, entry))
        return entry.id

    def get(self, principal: Principal, org_id: str, entry_id: str) -> dict[str, Any]:
        return present(self._entry(self._org(principal, org_id), entry_id))

    async def list(self, principal: Principal, org_id: str, query: ListQuery) -> Page:
        org_id = self._org(principal, org_id)
        page = await fetch(self._db, TABLE, query, store.SCOPE, (org_id,))
        page.rows = [present(row) for row in page.rows]
        return page

    async def patch(
        self, principal: Principal, org_id: str, entry_id: str, body: dict[str, Any]
    ) -> None:
        entry = self._entry(self._org(principal, org_id), entry_id)
        changes: dict[str, Any] = {}
        if "description" in body:
            changes["description"] = _description(body["description"])
        if "tags" in body:
            changes["tags"] = fields.tags("tags", body["tags"])
        changes["last_updated_date"] = clock.now_iso()
        changes["last_updated_by"] = principal.actor
        await self._db.write(lambda c: store.patch(c, entry.id, changes))

    async def delete(self, principal: Principal, org_id: str, entry_id: str) -> None:
        entry = self._entry(self._org(principal, org_id), entry_id)
        if entry.kind not in STAFF_KINDS:
            raise Conflict("A usage debit cannot be deleted: add a credit to correct it")
        await self._db.write(lambda c: store.delete(c, entry.id))

    # -- balance, usage, rates -----------------------------------------------------------
    def balance(self, principal: Principal, org_id: str) -> dict[str, Any]:
        org_id = self._org(principal, org_id)
        credits, debits = self._db.read(lambda c: store.totals(c, org_id))
        return {
            "org_id": org_id,
            "balance": credits + debits,
            "credits": credits,
            "debits": debits,
            "as_of": clock.now_iso(),
        }

    def summary(
        self, principal: Principal, org_id: str, period: str, first: str | None, last: str | None
    ) -> dict[str, Any]:
        org_id = self._org(principal, org_id)
        start, end = _range(period, first, last)
        span = (start.isoformat(), end.isoformat())
        used = self._db.read(lambda c: store.usage(c, org_id, *span))
        points = self._db.read(lambda c: store.points_by_day(c, org_id, *span))
        buckets = {key: _bucket(key) for key in _periods(period, start, end)}
        total = _bucket(None)
        for row in used:
            for into in (buckets[_key(period, row["day"])], total):
                into["meters"][row["meter"]]["quantity"] += row["quantity"]
        for row in points:
            for into in (buckets[_key(period, row["on_day"])], total):
                _add_points(into, row)
        del total["period"]
        return {
            "org_id": org_id,
            "period": period,
            "from": span[0],
            "to": span[1],
            "units": pricing.UNIT_NAMES,
            "periods": list(buckets.values()),
            "totals": total,
        }

    def rates(self, principal: Principal, org_id: str) -> dict[str, Any]:
        org_id = self._org(principal, org_id)
        stored = self._db.read(lambda c: store.rates(c, org_id))
        return {"org_id": org_id, "rates": pricing.effective(stored), "units": pricing.UNIT_NAMES}

    async def patch_rates(self, principal: Principal, org_id: str, body: dict[str, Any]) -> None:
        org_id = self._org(principal, org_id)
        changes = pricing.validated(body)
        stored = self._db.read(lambda c: store.rates(c, org_id))
        merged = {**stored, **changes}
        now = clock.now_iso()
        await self._db.write(lambda c: store.put_rates(c, org_id, merged, now, principal.actor))


def _description(value: Any) -> str:
    return fields.description("description", value)


def _day(field: str, value: str) -> date:
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise ValidationError(field, "must be a date (YYYY-MM-DD)") from None


def _range(period: str, first: str | None, last: str | None) -> tuple[date, date]:
    """The days a summary covers: by default the current month (by month) or the last 30
    days (by day), ending today."""
    if period not in MAX_DAYS:
        raise ValidationError("period", "must be day or month")
    end = _day("to", last) if last is not None else clock.now().date()
    if first is not None:
        start = _day("from", first)
    elif period == "month":
        start = end.replace(day=1)
    else:
        start = end - timedelta(days=29)
    if start > end:
        raise ValidationError("from", "must not be after to")
    if (end - start).days >= MAX_DAYS[period]:
        raise ValidationError("to", f"must be less than {MAX_DAYS[period]} days after from")
    return start, end


def _key(period: str, day: str) -> str:
    return day[:7] if period == "month" else day


def _periods(period: str, start: date, end: date) -> list[str]:
    keys: list[str] = []
    day = start
    while day <= end:
        key = _key(period, day.isoformat())
        if not keys or keys[-1] != key:
            keys.append(key)
        day += timedelta(days=1)
    return keys


def _bucket(key: str | None) -> dict[str, Any]:
    meters = {meter: {"quantity": 0, "points": 0} for meter in pricing.METERS}
    return {"period": key, "credits": 0, "debits": 0, "net": 0, "meters": meters}


def _add_points(into: dict[str, Any], row: dict[str, Any]) -> None:
    points = int(row["points"])
    into["credits" if points > 0 else "debits"] += points
    into["net"] += points
    if row["kind"] == "usage" and row["meter"] in into["meters"]:
        into["meters"][row["meter"]]["points"] += points
