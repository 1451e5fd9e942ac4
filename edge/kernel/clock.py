"""The one source of 'now', so tests can move time instead of sleeping."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

_offset = timedelta(0)
_frozen: datetime | None = None


def now() -> datetime:
    return (_frozen or datetime.now(UTC)) + _offset


def freeze() -> None:
    """Stop the clock where it is, until `reset` (tests only: a window of a second must not
    close while a loaded machine hashes a password)."""
    global _frozen
    _frozen = now() - _offset


def advance(delta: timedelta) -> None:
    """Move the clock forward (tests only)."""
    global _offset
    _offset += delta


def reset() -> None:
    global _offset, _frozen
    _offset = timedelta(0)
    _frozen = None


def iso(moment: datetime) -> str:
    """Fixed-width ISO 8601 UTC with `Z`: sorts correctly as text."""
    u = moment.astimezone(UTC)  # formatted by hand: strftime took twice as long
    return (
        f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}"
        f".{u.microsecond:06d}Z"
    )


def now_iso() -> str:
    return iso(now())


def parse(text: str) -> datetime:
    """Parse an ISO 8601 date or datetime; naive values are taken as UTC."""
    value = datetime.fromisoformat(text.strip().replace(" ", "+"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("date out of range") from None


def day_bounds(text: str) -> tuple[str, str] | None:
    """For a bare date ('2026-11-22'), the first and last instant of that UTC day."""
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        return None
    start = datetime.combine(day, time.min, UTC)
    try:
        end = start + timedelta(days=1) - timedelta(microseconds=1)
    except OverflowError:
        end = datetime.max.replace(tzinfo=UTC)
    return iso(start), iso(end)
