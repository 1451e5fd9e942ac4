"""Who may hold how many of the broker's connections (docs/mqtt.md, "Connections"):

- the site, `total` (`mqtt_max_connections`), and one client address,
  `per_address` (`mqtt_max_connections_per_address`): counted from the moment a
  connection opens, before any CONNECT is read, so connections that never send one hold
  no more than their address's share;
- one account (a device, or one user's tools), `per_account`
  (`mqtt_account_connections`): counted once its CONNECT is authenticated, clean and
  persistent sessions alike, over every listener (TCP, TLS, WebSockets).

Without the last two, one device's API key inventing client IDs took every connection of
the site, and every other device, of its org and of others, was refused at CONNECT. A
connection taking over a client ID its account already holds is let in at the cap: the
connection it replaces is closed (MQTT-3.1.4-2), so the count comes back at once, and a
device whose old connection is half-open can always come back.

Each connection is a `Slot`, released exactly once when the connection ends, whatever
ended it. Refusals are counted by kind for GET /metrics.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

SITE, ADDRESS, ACCOUNT = "site", "address", "account"


@dataclass(frozen=True)
class Caps:
    total: int
    per_address: int
    per_account: int


@dataclass(frozen=True)
class Full:
    """Why a connection has no slot: the limit it met (`SITE` or `ADDRESS`), and in words."""

    limit: str
    reason: str


@dataclass
class Slot:
    """One open connection: its client address, and its account once authenticated."""

    address: str
    account_id: str | None = None


class Admission:
    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.live = 0
        self.refused: dict[str, int] = {ADDRESS: 0, ACCOUNT: 0}
        self._addresses: Counter[str] = Counter()
        self._accounts: Counter[str] = Counter()

    def admit(self, address: str) -> Slot | Full:
        """A slot for a new connection from `address`, or why there is none."""
        if self.live >= self.caps.total:
            return Full(SITE, f"{self.live} connections already open")
        if self._addresses[address] >= self.caps.per_address:
            self.refused[ADDRESS] += 1
            return Full(ADDRESS, f"{address} already holds {self.caps.per_address} connections")
        self.live += 1
        self._addresses[address] += 1
        return Slot(address)

    def claim(self, slot: Slot, account_id: str, replaces: bool) -> bool:
        """Count the connection as the account's, unless it holds its most already and the
        connection does not replace one of its own (a takeover); a refusal is counted."""
        if not replaces and self._accounts[account_id] >= self.caps.per_account:
            self.refused[ACCOUNT] += 1
            return False
        slot.account_id = account_id
        self._accounts[account_id] += 1
        return True

    def release(self, slot: Slot) -> None:
        self.live -= 1
        _drop(self._addresses, slot.address)
        if slot.account_id is not None:
            _drop(self._accounts, slot.account_id)

    def held_by(self, account_id: str) -> int:
        return self._accounts[account_id]


def _drop(counts: Counter[str], key: str) -> None:
    """One fewer; a key at zero is removed, so the counters hold only what is open."""
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]
