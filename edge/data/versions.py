"""Which incarnation of an entry, at which revision: a data entry's ETag (docs/data.md,
"Conditional writes").

A revision counts the writes of one entry, and an entry deleted and created again starts
again at 1: a revision alone cannot tell the entry an editor read from a new one at the
same path, so a stale `If-Match: "1"` would overwrite the new entry. The ETag therefore
names the incarnation too, a short hash of when and by whom the entry was created (which
every write keeps), and a conditional write compares both. The SDK's `revision` is left
as the interface has it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

_TAG = re.compile(r"([0-9]{1,18})-([0-9a-f]{8})")


@dataclass(frozen=True, slots=True)
class Version:
    """An entry's revision and incarnation, as its ETag `"<revision>-<incarnation>"` says."""

    revision: int
    incarnation: str

    @property
    def tag(self) -> str:
        return f"{self.revision}-{self.incarnation}"


def of(entry: Any) -> Version:
    """The version of an entry (a DataEntry, an EntryHistory: anything with `revision`,
    `created_by` and `created_date`)."""
    return Version(entry.revision, incarnation(entry.created_by, entry.created_date))


def incarnation(created_by: str, created_date: str) -> str:
    """Eight hex digits of a hash of the entry's creation: another for an entry created
    again (a later date), the same for every write of one entry."""
    digest = hashlib.sha256(f"{created_by}\n{created_date}".encode()).hexdigest()
    return digest[:8]


def parse(text: str) -> Version | None:
    """The version an ETag's text (without its quotes) names; None when it names none."""
    found = _TAG.fullmatch(text)
    if found is None:
        return None
    return Version(int(found[1]), found[2])
