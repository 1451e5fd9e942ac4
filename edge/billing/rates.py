"""The meters, their units, default rates, and what a quantity of usage costs.

Rates are whole points per unit, so every debit is a whole number of points: a day's
debit is the quantity times the rate divided by the unit, rounded up (a part of a unit
used is a unit paid for, and nothing is lost to rounding down day after day).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from edge.kernel import fields

METERS = ("devices", "users", "data_bytes", "file_bytes", "mqtt_messages")
GAUGES = ("devices", "users", "data_bytes", "file_bytes")  # snapshotted once a day
COUNTERS = ("mqtt_messages",)  # counted in memory, flushed periodically
GIB = 1 << 30
UNITS: dict[str, int] = {
    "devices": 1,
    "users": 1,
    "data_bytes": GIB,
    "file_bytes": GIB,
    "mqtt_messages": 1000,
}
UNIT_NAMES: dict[str, str] = {
    "devices": "device-day",
    "users": "user-day",
    "data_bytes": "GiB-day of data",
    "file_bytes": "GiB-day of files",
    "mqtt_messages": "1,000 MQTT messages",
}
DEFAULT_RATES: dict[str, int] = {
    "devices": 1,
    "users": 1,
    "data_bytes": 10,
    "file_bytes": 10,
    "mqtt_messages": 1,
}
MAX_RATE = 1_000_000


def effective(stored: Mapping[str, int]) -> dict[str, int]:
    """An organization's rates: its own where set, the defaults elsewhere."""
    return {meter: int(stored.get(meter, DEFAULT_RATES[meter])) for meter in METERS}


def cost(meter: str, quantity: int, rate: int) -> int:
    """Points a quantity of one meter costs (rounded up to whole points)."""
    return -(-quantity * rate // UNITS[meter]) if quantity > 0 else 0


def validated(body: Mapping[str, Any]) -> dict[str, int]:
    return {
        meter: fields.integer(meter, body[meter], 0, MAX_RATE) for meter in METERS if meter in body
    }
