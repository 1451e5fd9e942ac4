"""Migration 0009's triggers: the auth epoch moves whenever a device's key or certificates
change or it is suspended, moved or deleted (cached device principals and live MQTT
connections depend on those); the access epoch when it is moved or deleted; nothing moves
for a change that concerns neither."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from edge.accounts.device_kind import new_device
from edge.app import Site
from edge.devices import credentials
from storage import access, devices
from storage import credentials as auth_store
from storage import device_certificates as certificates
from storage.records import DeviceCertificate
from storage.rows import Tx
from tests.rows import Rows

Change = Callable[[Tx, str, str], Any]


def _patch(**changes: Any) -> Change:
    return lambda conn, device_id, project: devices.patch(conn, device_id, changes)


CHANGES: dict[str, tuple[Change, bool, bool]] = {  # change, auth epoch moves, access moves
    "key reset": (_patch(api_key_hash=credentials.key_hash("edk_new")), True, False),
    "suspended": (_patch(is_active=False), True, False),
    "scopes changed": (_patch(iot_scopes={"/a": {"can_publish": True}}), True, False),
    "moved": (lambda c, d, p: devices.patch(c, d, {"project_id": p}), True, True),
    "deleted": (lambda c, d, p: c.execute("DELETE FROM devices WHERE id = ?", (d,)), True, True),
    "certificate revoked": (
        lambda c, d, p: certificates.end_all(c, d, "now", "superseded", "superseded"),
        True,
        False,
    ),
    "renamed": (_patch(name="other", name_folded="other"), False, False),
}


@pytest.mark.parametrize("name", CHANGES)
def test_epochs_follow_what_concerns_them(site: Site, name: str) -> None:
    rows = Rows(site)
    rows.org()
    project = rows.project()
    _, key_hash = credentials.new_api_key()
    device = new_device(rows.org_id, "", {"name": "d", "api_key_hash": key_hash})
    issued = DeviceCertificate("ab12", device.id, "then", "later", None)

    def arrange(conn: Tx) -> None:
        devices.create(conn, device)
        certificates.register(conn, issued)

    db = site.services.db
    db.write_sync(arrange)
    before = db.read(lambda c: (auth_store.auth_epoch(c), access.epoch(c)))
    change, auth_moves, access_moves = CHANGES[name]
    db.write_sync(lambda c: change(c, device.id, project))
    after = db.read(lambda c: (auth_store.auth_epoch(c), access.epoch(c)))
    assert (after[0] > before[0], after[1] > before[1]) == (auth_moves, access_moves)
