"""What the services know about one user, kept between requests.

A user as a caller sees them is built from facts about the user alone (the row, what they
hold, their picture and last sign-in) and the caller's standing. The facts cost four point
queries and decoding the row, several times what deciding and shaping the answer costs, and
they are the same for every caller; so they are kept, per user, and the caller's part is
worked out once per caller: its answer is kept beside the facts (for a few callers at a
time), since it follows from them and from the caller's standing, which the access epoch
guards too.

They are dropped whenever the access epoch (what anyone holds; migration 0007) or the users
epoch (a user row, a picture or a session; migration 0018) moves. Triggers bump both inside
the writing transaction, whoever writes, and the epochs are read once per read snapshot, so
a change counts from the next request on, in this process or any other. Only users found
are kept (an unknown ID costs its query every time). The cache counts entries, so what
one entry may hold is bounded too: a user who holds more than MAX_HELD access objects is
not kept, nor a picture larger than MAX_PICTURE bytes (it is read on every GET), nor an
answer that shows a picture (each would hold its own copy of it, in base64).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edge.access import holdings
from edge.access.cache import EpochCache
from edge.access.holdings import Holdings
from edge.kernel.principal import Principal
from storage import epochs
from storage import users as store
from storage.database import Database
from storage.records import User
from storage.rows import Row

MAX_ENTRIES = 1024
MAX_HELD = 32  # access objects
MAX_PICTURE = 16 * 1024  # bytes
MAX_ANSWERS = 8  # callers' answers kept per user; past it they start over


@dataclass
class Facts:
    user: User
    held: Holdings
    # What a single GET shows beside the row, read on the first one: (picture, last_seen).
    shown: tuple[Row | None, str | None] | None = None
    # A single GET's answer to each caller who was allowed to read the user.
    answers: dict[Principal, Row] = field(default_factory=dict)

    def remember(self, principal: Principal, answer: Row) -> None:
        if len(self.answers) >= MAX_ANSWERS:
            self.answers.clear()
        self.answers[principal] = answer


class UserFacts:
    def __init__(self, db: Database, *, cache: bool = True) -> None:
        self._db = db
        self.cache: EpochCache[Facts] | None = None
        if cache:
            self.cache = EpochCache(self._epochs, max_entries=MAX_ENTRIES)

    def of(self, user_id: str) -> Facts | None:
        """The user and what they hold, or None when no user has this ID."""
        found = self._kept(user_id)
        if found is not None:
            return found
        user = self._db.read(lambda c: store.get(c, user_id))
        if user is None:
            return None
        made = Facts(user, holdings.of_account(self._db, user.org_id, user_id))
        if self.cache is not None and _size(made.held) <= MAX_HELD:
            self.cache.put(user_id, made)
        return made

    def user_of(self, user_id: str) -> User | None:
        """The user's row alone: the kept one, or a point query (what they hold is not
        read, nor kept: a user of thousands of groups is never kept)."""
        found = self._kept(user_id)
        if found is not None:
            return found.user
        return self._db.read(lambda c: store.get(c, user_id))

    def _kept(self, user_id: str) -> Facts | None:
        return self.cache.get(user_id) if self.cache is not None else None

    def shown(self, facts: Facts) -> tuple[Row | None, str | None]:
        """The user's picture (or None) and last sign-in (or None)."""
        if facts.shown is not None:
            return facts.shown
        user_id = facts.user.id
        shown = self._db.read(lambda c: store.shown_alone(c, user_id))
        picture = shown[0]
        if picture is None or len(picture["data"]) <= MAX_PICTURE:
            facts.shown = shown
        return shown

    def _epochs(self) -> tuple[int, int]:
        read = self._db.read_memo(epochs.KEY, epochs.read)
        return read.access, read.users


def _size(held: Holdings) -> int:
    return len(held.project_access) + len(held.group_access) + len(held.role_ids)
