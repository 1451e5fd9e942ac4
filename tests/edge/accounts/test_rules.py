"""edge/accounts/rules.py: the value rules of the fields every account has, normalized or
refused naming the field; a user and a device never disagree on a field they share."""

from __future__ import annotations

from typing import Any

import pytest

from edge.accounts import device_kind, rules, user_kind
from edge.kernel import fields
from edge.kernel.errors import ValidationError

SHARED = {
    "picture": "  https://x.test/p.png ",
    "locale": "fr_fr",
    "zoneinfo": "Europe/Paris",
    "tags": [" a", "b", "a "],
    "is_active": False,
    "is_delete_protected": True,
    "custom_attributes": {"shift": "night"},
    "restricted_custom_attributes": {},
}


def test_shared_fields_are_normalized_as_stored_columns() -> None:
    assert rules.columns(SHARED) == {
        "picture": "https://x.test/p.png",
        "locale": "fr-FR",
        "zoneinfo": "Europe/Paris",
        "tags": ["a", "b"],
        "is_active": False,
        "is_delete_protected": True,
        "custom_attributes": {"shift": "night"},
        "restricted_custom_attributes": {},
    }
    assert rules.columns({"picture": ""}) == {"picture": None}
    assert rules.columns({"unknown": 1, "email": "x"}) == {}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("picture", "x" * (fields.MAX_URL + 1)),
        ("locale", "french"),
        ("zoneinfo", "Mars/Olympus"),
        ("tags", "a,b"),
        ("is_active", "false"),
        ("is_delete_protected", 1),
        ("custom_attributes", ["a"]),
        ("restricted_custom_attributes", {"big": "x" * fields.MAX_ATTRIBUTES_BYTES}),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(name: str, value: Any) -> None:
    with pytest.raises(ValidationError) as refused:
        rules.columns({name: value})
    assert refused.value.field == name


def test_both_kinds_read_the_shared_fields_alike() -> None:
    users = user_kind.columns(SHARED)
    devices = device_kind.columns(SHARED)
    assert users == devices == rules.columns(SHARED)
    for kind in (user_kind, device_kind):
        with pytest.raises(ValidationError) as refused:
            kind.columns({"zoneinfo": "Nowhere"})
        assert refused.value.field == "zoneinfo"
