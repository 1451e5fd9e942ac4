"""What each account (a device, or a user's tools) holds in the broker, all its sessions
together, and the totals it may not pass (docs/mqtt.md, "Per account"):

- `account_sessions` persistent sessions (a new one past it is refused at CONNECT);
- `account_queue_bytes` of QoS 1/2 messages waiting for its sessions (past it a message
  for an absent session is dropped, and a connected client is disconnected, as past its
  own `mqtt_queue_bytes`);
- `account_retained_bytes` of retained messages it published (topic and payload; past it
  a retained PUBLISH is refused).

The per-client bounds (embedded_broker/sessions.py) keep one client from growing the
broker's memory; these keep one account from filling the shared disk by inventing client
IDs (300 persistent sessions once stored 219 MiB for 768 KB published) or retaining
without end. Every refusal is counted (GET /metrics). A refused CONNECT is logged as any
refused connection is; of the refused messages, one line per account and kind of limit
is logged at most every `LOG_SECONDS` (embedded_broker/refusal_lines.py), so a device past
its limit cannot flood the log.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from embedded_broker.refusal_lines import RefusalLines

SESSIONS, QUEUE, RETAINED = "sessions", "queue", "retained"
log = logging.getLogger("edge.mqtt")


@dataclass(frozen=True)
class AccountLimits:
    sessions: int = 10
    connections: int = 16  # open at once, clean or persistent (embedded_broker/admission.py)
    queue_bytes: int = 64 * 1024 * 1024
    retained_bytes: int = 16 * 1024 * 1024


@dataclass
class Usage:
    """One account's share, kept current by the sessions and the router."""

    sessions: set[str] = field(default_factory=set)  # keys of its persistent sessions
    queued: int = 0  # bytes of QoS 1/2 messages waiting, all its sessions
    retained: int = 0  # bytes of the retained messages it published


class Accounts:
    def __init__(self, limits: AccountLimits) -> None:
        self.limits = limits
        self.refused: dict[str, int] = {SESSIONS: 0, QUEUE: 0, RETAINED: 0}
        self._usage: dict[str, Usage] = {}
        self._lines = RefusalLines()

    def usage(self, account_id: str) -> Usage:
        found = self._usage.get(account_id)
        if found is None:
            found = self._usage[account_id] = Usage()
        return found

    def may_keep_session(self, account_id: str, key: str) -> bool:
        """Whether the account may keep this persistent session (one it holds already, or
        one more within its limit); a refusal is counted."""
        held = self.usage(account_id).sessions
        if key in held or len(held) < self.limits.sessions:
            return True
        self.refused[SESSIONS] += 1  # the CONNECT's refusal is the log line
        return False

    def kept(self, account_id: str, key: str) -> None:
        self.usage(account_id).sessions.add(key)

    def ended(self, key: str) -> None:
        """A persistent session is gone (its key is `<account_id>:<client_id>`)."""
        self.usage(key.split(":", 1)[0]).sessions.discard(key)

    def may_queue(self, usage: Usage, size: int) -> bool:
        return usage.queued + size <= self.limits.queue_bytes

    def refuse(self, account_id: str, limit: str, detail: str) -> None:
        """Count a refusal; log it unless this account's refusals of this kind were
        logged less than LOG_SECONDS ago (embedded_broker/refusal_lines.py)."""
        self.refused[limit] += 1
        count = self._lines.due((account_id, limit))
        if count:
            log.warning(
                "mqtt: account %s is at its %s limit (%s): refused (%d since the last such"
                " line, %d such refusals in all)",
                account_id,
                limit,
                detail,
                count,
                self.refused[limit],
            )
