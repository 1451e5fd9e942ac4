"""The device kind: what devices have that users do not (an owner, `iot_scopes`,
descriptive fields, API keys and certificates), over the flow all accounts share
(edge/accounts/__init__.py)."""

from __future__ import annotations

from edge.access.engine import Caller
from storage.records import Device


class DeviceKind:
    name = "device"
    noun = "Device"
    admin_acts = True

    def login(self, row: Device) -> str:
        return row.name


DEVICE = DeviceKind()


def owns(grants: Caller, device: Device) -> bool:
    """Whether the caller is the device's owner (a user)."""
    me = grants.principal
    return me.kind == "user" and device.owner_id == me.account_id
