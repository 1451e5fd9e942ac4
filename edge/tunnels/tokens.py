"""The two tokens of a tunnel, one for each end.

Each is 256 random bits behind a prefix naming its end (`etc_` the client's, `etd_` the
device's), so a token presented at the wrong end is refused before any lookup and a
leaked one is recognisable. They are stored as their SHA-256, as device API keys are: a
value that random cannot be found from its hash. A token is found only through the open
tunnel it belongs to (storage/tunnels.py), so it is useless once the tunnel is closed or
expired.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Literal

End = Literal["client", "device"]
PREFIX: dict[End, str] = {"client": "etc_", "device": "etd_"}
COLUMN: dict[End, str] = {"client": "client_token_hash", "device": "device_token_hash"}
TOKEN_BYTES = 32


def new_token(end: End) -> tuple[str, str]:
    """A fresh token for `end` and the hash stored in its place."""
    token = PREFIX[end] + secrets.token_urlsafe(TOKEN_BYTES)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def is_token_of(token: str, end: End) -> bool:
    return token.startswith(PREFIX[end]) and len(token) == len(PREFIX[end]) + 43
