"""Resource IDs: opaque, URL-safe, a fixed length (16) for every kind.

An access object's ID is 29 characters: the 16 of its target, then the first 13 of the
grantee's ID, so the same (target, grantee) pair always has the same access ID.
"""

from __future__ import annotations

import secrets
import string

ALPHABET = string.ascii_letters + string.digits
ID_LENGTH = 16
ACCESS_ID_LENGTH = 29


_FAIR = 256 - 256 % len(ALPHABET)  # bytes below this map onto the alphabet evenly


def new_id() -> str:
    """16 characters drawn uniformly from the alphabet, from one read of the system's
    random source (`secrets.choice` per character would make sixteen)."""
    while True:
        picked = [ALPHABET[b % len(ALPHABET)] for b in secrets.token_bytes(24) if b < _FAIR]
        if len(picked) >= ID_LENGTH:
            return "".join(picked[:ID_LENGTH])


def access_id(target_id: str, grantee_id: str) -> str:
    """The target's ID, then the start of the grantee's: readable, and computable in SQL."""
    return target_id + grantee_id[: ACCESS_ID_LENGTH - len(target_id)]


def looks_like_id(value: str) -> bool:
    return len(value) == ID_LENGTH and all(c in ALPHABET for c in value)
