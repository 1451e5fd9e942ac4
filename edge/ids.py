"""Resource IDs: opaque, URL-safe, a fixed length (16) for every kind.

An access object's ID is 29 characters: the 16 of its target, then 13 derived from the
grantee's ID, so the same (target, grantee) pair always has the same access ID.
"""

from __future__ import annotations

import hashlib
import secrets
import string

ALPHABET = string.ascii_letters + string.digits
ID_LENGTH = 16
ACCESS_ID_LENGTH = 29


def new_id() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(ID_LENGTH))


def access_id(target_id: str, grantee_id: str) -> str:
    digest = int.from_bytes(hashlib.sha256(grantee_id.encode()).digest(), "big")
    tail = []
    for _ in range(ACCESS_ID_LENGTH - len(target_id)):
        digest, index = divmod(digest, len(ALPHABET))
        tail.append(ALPHABET[index])
    return target_id + "".join(tail)


def looks_like_id(value: str) -> bool:
    return len(value) == ID_LENGTH and all(c in ALPHABET for c in value)
