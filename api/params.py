"""Query-string values: booleans (an empty value means true), integers, dates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from multidict import MultiMapping

from edge.kernel.errors import ValidationError

TRUE = ("", "true", "1", "yes")
FALSE = ("false", "0", "no")


def boolean(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ValidationError(name, "must be true or false")


def flag(query: Mapping[str, str], name: str, default: bool = False) -> bool:
    return boolean(name, query[name]) if name in query else default


def integer(name: str, raw: str, low: int, high: int) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValidationError(name, "must be a whole number") from None
    if not low <= value <= high:
        raise ValidationError(name, f"must be between {low} and {high}")
    return value


DELETE_QUERY = ("force", "permanent")


@dataclass(frozen=True)
class Deletion:
    """A delete's flags: `force` overrides delete protection (admins only); `permanent`
    erases at once instead of moving to the trash (docs/lifecycle.md)."""

    force: bool
    permanent: bool


def single_values(query: MultiMapping[str]) -> dict[str, str]:
    """Each parameter's value; one given more than once is refused (never first or last)."""
    seen: dict[str, str] = {}
    for key in query:
        values = query.getall(key)
        if len(values) > 1:
            raise ValidationError(key, "was given more than once")
        seen[key] = values[0]
    return seen


def only(query: MultiMapping[str], names: tuple[str, ...]) -> dict[str, str]:
    """Each parameter's value; one the operation does not take, or one given twice, is
    refused."""
    for name in query:
        if name not in names:
            raise ValidationError(name, "is not a query parameter of this operation")
    return single_values(query)


def deletion(query: MultiMapping[str], *, permanent_by_default: bool = False) -> Deletion:
    """The flags of every DELETE; anything else in its query string is refused."""
    only(query, DELETE_QUERY)
    return Deletion(flag(query, "force"), flag(query, "permanent", permanent_by_default))
