"""A tunnel as the interface shows it (the SDK's Tunnel): `uuid`, `opened_date`,
`opened_by`, `timeout` in seconds, and, beyond the model, its `services` and
`expires_date`. Tokens are never shown here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edge.kernel import clock
from storage import tunnels as store
from storage.database import Database
from storage.records import Tunnel

Row = dict[str, Any]


def present(tunnel: Tunnel) -> Row:
    return {
        "uuid": tunnel.id,
        "opened_date": tunnel.opened_date,
        "opened_by": tunnel.opened_by,
        "timeout": tunnel.timeout_seconds,
        "services": tunnel.services,
        "expires_date": tunnel.expires_date,
    }


def open_for(db: Database, device_ids: Sequence[str], most: int) -> dict[str, list[Row]]:
    """The open tunnels of each of these devices (one query), shaped as Tunnels: at most
    `most` a device (`tunnel_max_open_per_device`, the newest), so a device view stays
    small even where more were opened before the limit was set or lowered."""
    now = clock.now_iso()
    found = db.read(lambda c: store.open_of(c, device_ids, now, most))
    out: dict[str, list[Row]] = {}
    for tunnel in found:
        out.setdefault(tunnel.device_id, []).append(present(tunnel))
    return out
