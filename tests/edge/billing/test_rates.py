"""edge/billing/rates.py: an org's rates over the defaults, what a quantity costs (rounded
up to whole points, nothing for nothing), and the rates' value rule."""

from __future__ import annotations

import pytest

from edge.billing import rates
from edge.kernel.errors import ValidationError


def test_an_orgs_own_rates_over_the_defaults() -> None:
    assert rates.effective({}) == rates.DEFAULT_RATES
    mine = rates.effective({"devices": 5})
    assert mine == {**rates.DEFAULT_RATES, "devices": 5}
    assert list(mine) == list(rates.METERS)


@pytest.mark.parametrize(
    ("meter", "quantity", "rate", "points"),
    [
        ("devices", 3, 2, 6),
        ("mqtt_messages", 1000, 1, 1),
        ("mqtt_messages", 1001, 1, 2),  # a part of a unit is a unit paid for
        ("mqtt_messages", 1, 1, 1),
        ("data_bytes", rates.GIB // 2, 10, 5),
        ("file_bytes", rates.GIB + 1, 10, 11),
        ("devices", 0, 5, 0),
        ("devices", 7, 0, 0),
        ("devices", -3, 5, 0),
    ],
)
def test_what_a_quantity_costs(meter: str, quantity: int, rate: int, points: int) -> None:
    assert rates.cost(meter, quantity, rate) == points


def test_rates_are_whole_points_in_range() -> None:
    assert rates.validated({"devices": 0, "users": rates.MAX_RATE, "other": 1}) == {
        "devices": 0,
        "users": rates.MAX_RATE,
    }
    for bad in (-1, rates.MAX_RATE + 1, 1.5, "3"):
        with pytest.raises(ValidationError) as refused:
            rates.validated({"data_bytes": bad})
        assert refused.value.field == "data_bytes"
