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


def test_encode_is_changes_of_every_field() -> None:
    device = new_device(
        "o" * 16,
        "",
        {"name": "pump", "api_key_hash": "h", "created_by": None, "last_updated_by": None},
    )
    twin = Twin("d" * 16, {"a": [1, None]}, {}, {"desired": {}, "reported": {}}, 3, NOW)
    who = Principal("user", "u" * 16, "s" * 16, "o" * 16)
    event = audit.event("twin_desired_updated", who, target=("device", "d" * 16))
    cases: list[tuple[Codec[Any], Any]] = [
        (DEVICES, device),
        (DEVICES, dataclasses.replace(device, is_active=False, iot_scopes={"/a": {}})),
        (TWINS, twin),
        (AUDIT_EVENTS, event),
        (AUDIT_EVENTS, dataclasses.replace(event, details={"version": 4}, org_id=None)),
    ]
    for codec, record in cases:
        encoded = codec.encode(record)
        assert encoded == codec.changes(_fields(record))
        assert list(encoded) == list(codec.columns)
