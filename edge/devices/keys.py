"""The API-key fast path: a device's key in, its principal out, without token verification.

A key is looked up by its SHA-256 (one probe of a unique index) and compared in constant
time; the principal it proves is cached like a verified access token
(edge/auth/principal_cache.py), keyed by the hash so no raw key stays in memory. The
cache is cleared whenever the auth epoch moves (migration 0009's triggers bump it when a
device's key or certificates change, or it is suspended, moved or deleted), which every
use reads first: a reset key stops working at once, in this process and in any other.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from edge.auth.principal_cache import PrincipalCache
from edge.devices import credentials
from edge.devices.last_seen import LastSeen
from edge.kernel.errors import Unauthenticated
from edge.kernel.principal import Principal
from storage import devices as store
from storage import epochs
from storage.database import Database
from storage.records import Device

INVALID = "Invalid API key"


class DeviceKeys:
    def __init__(self, db: Database, last_seen: LastSeen, *, cache: bool = True) -> None:
        self._db = db
        self._last_seen = last_seen
        self.cache: PrincipalCache | None = None
        if cache:
            self.cache = PrincipalCache(lambda: db.read_memo(epochs.KEY, epochs.read).auth)

    def verify(self, key: str) -> Principal:
        """The principal of an active device holding this key, or Unauthenticated. Each
        success counts as the device being seen (batched, see last_seen.py)."""
        digest = credentials.key_hash(key)
        entry = self.cache.get(digest) if self.cache is not None else None
        if entry is not None:
            self._last_seen.seen(entry.principal.account_id)
            return entry.principal
        device = self._by_hash(key, digest)
        if device is None:
            raise Unauthenticated(INVALID)
        if not device.is_active:
            raise Unauthenticated("Device is not active")
        found = Principal("device", device.id, None, device.org_id)
        if self.cache is not None:
            self.cache.put(digest, found, math.inf)
        self._last_seen.seen(device.id)
        return found

    def find(self, key: str) -> Device | None:
        """The device this key belongs to (active or not), or None."""
        return self._by_hash(key, credentials.key_hash(key))

    def forget(self, device_ids: Iterable[str]) -> None:
        """Drop cached principals of these devices now (the epoch would on the next use)."""
        if self.cache is not None:
            self.cache.drop_accounts(set(device_ids))

    def _by_hash(self, key: str, digest: str) -> Device | None:
        if not credentials.is_api_key(key):
            return None
        device = self._db.read(lambda c: store.by_key_hash(c, digest))
        if device is None or not credentials.matches(key, device.api_key_hash):
            return None
        return device
