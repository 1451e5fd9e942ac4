"""A record's columns for INSERT (`Codec.encode`) are what `Codec.changes` makes of all
its fields: JSON columns dumped (None kept), flags as 0 and 1, the rest as they are."""

from __future__ import annotations

import dataclasses
from typing import Any

from edge.accounts.device_kind import new_device
from edge.kernel import audit
from edge.kernel.principal import Principal
from storage.records import AUDIT_EVENTS, DEVICES, TWINS, Codec, Twin

NOW = "2026-11-28T03:00:00.000000Z"


def _fields(record: Any) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def _same(codec: Codec[Any], record: Any) -> None:
    encoded = codec.encode(record)
    assert encoded == codec.changes(_fields(record))
    assert list(encoded) == list(codec.columns)


def test_encode_is_changes_of_every_field() -> None:
    device = new_device(
        "o" * 16,
        "",
        {"name": "pump", "api_key_hash": "h", "created_by": None, "last_updated_by": None},
    )
    _same(DEVICES, device)
    _same(DEVICES, dataclasses.replace(device, is_active=False, iot_scopes={"/a": {}}))
    twin = Twin("d" * 16, {"a": [1, None]}, {}, {"desired": {}, "reported": {}}, 3, NOW)
    _same(TWINS, twin)
    who = Principal("user", "u" * 16, "s" * 16, "o" * 16)
    event = audit.event("twin_desired_updated", who, target=("device", "d" * 16))
    _same(AUDIT_EVENTS, event)
    _same(AUDIT_EVENTS, dataclasses.replace(event, details={"version": 4}, org_id=None))
