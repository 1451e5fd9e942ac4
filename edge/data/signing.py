"""Signed entries: an HMAC-SHA256 over each entry, made with a key of the site when the
entry is written, checked on `GET ...?verify=true` (docs/data.md, "Signed entries").

What is signed (the canonical encoding): the compact JSON array
`["edge-data/1", group_id, path, value, [unicode_1 .. unicode_10], [number_1, number_2],
created_by, created_date, last_updated_by, last_updated_date, updated_by_list,
updated_date_list, revision]`, with the value in its stored form (compact JSON, keys in
stored order). A change to any of these in the database file, made behind the server's
back, makes `verified` false. The key is `keys/data-signing.key` in the data folder (32
random bytes, owner-only), apart from the token keys so either can be rotated alone; the
signature names the key (`<key id>.<digest>`) so older keys can keep verifying later.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from pathlib import Path
from typing import Any

import orjson

from storage import layout
from storage.data import NUMBER_FIELDS, UNICODE_FIELDS, DataEntry

KEY_FILE = layout.DATA_SIGNING_KEY_FILE
SCHEME = "edge-data/1"


class DataSigner:
    def __init__(self, key: bytes) -> None:
        self._key = key
        self.key_id = _b64(hashlib.sha256(key).digest()[:6])

    @classmethod
    def load_or_create(cls, data_dir: Path) -> DataSigner:
        """The site's data-signing key, made on first use."""
        folder = layout.keys_dir(data_dir)
        folder.mkdir(mode=layout.SECRET_DIR_MODE, parents=True, exist_ok=True)
        path = folder / KEY_FILE
        if not path.exists():
            layout.write_secret(path, secrets.token_bytes(32))
        return cls(path.read_bytes())

    def sign(self, entry: DataEntry, value_text: str | None = None) -> str:
        """`value_text`: the value's stored text, when the caller has it (not encoded again)."""
        digest = hmac.new(self._key, canonical(entry, value_text), hashlib.sha256).digest()
        return f"{self.key_id}.{_b64(digest)}"

    def verify(self, entry: DataEntry) -> bool:
        try:
            return hmac.compare_digest(self.sign(entry).encode(), entry.signature.encode())
        except (TypeError, ValueError):  # a value the database should never have held
            return False


def canonical(entry: DataEntry, value_text: str | None = None) -> bytes:
    """The signed bytes. Compact JSON of a list is `[` + its items' texts joined by `,` +
    `]`, so the value's stored text (compact, keys in order, non-ASCII as itself: the same
    encoding) can stand in its place without encoding the value again.

    Around the value are only strings, integers and null, unless a number field holds a
    float: orjson writes those exactly as `json.dumps` does (the floats it writes its own
    way, `1e16` for `1e+16`), five times faster, so it writes them."""
    after = _after_value(entry)
    head = orjson.dumps([SCHEME, entry.group_id, entry.path])[:-1]
    value = (_dumps(entry.value) if value_text is None else value_text).encode()
    if any(isinstance(n, float) for n in after[1]):
        tail = _dumps(after)[1:].encode()
    else:
        tail = orjson.dumps(after)[1:]
    return b"%b,%b,%b" % (head, value, tail)


def _after_value(entry: DataEntry) -> list[Any]:
    return [
        [getattr(entry, name) for name in UNICODE_FIELDS],
        [getattr(entry, name) for name in NUMBER_FIELDS],
        entry.created_by,
        entry.created_date,
        entry.last_updated_by,
        entry.last_updated_date,
        entry.updated_by_list,
        entry.updated_date_list,
        entry.revision,
    ]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


__all__ = ["DataSigner", "canonical"]
