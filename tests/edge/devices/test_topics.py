"""Topic rights: scopes cover their subtree, wildcards never escape a scope, `$` topics are
never reachable, and bad scopes are refused with the field named."""

from __future__ import annotations

import pytest

from edge.devices.topics import device_rights, normalize_scopes, root_scope, scope_rights
from edge.kernel.errors import ValidationError

ROOT = root_scope("org1", None)
RIGHTS = device_rights(
    ROOT,
    "dev1",
    normalize_scopes(
        "iot_scopes",
        {"sensors": {"can_publish": True}, "/alarms/": {"can_subscribe": True}},
    ),
)


@pytest.mark.parametrize(
    ("topic", "allowed"),
    [
        ("org1/sensors", True),
        ("org1/sensors/temp/1", True),
        ("org1/sensorsX", False),
        ("org1/alarms", False),  # subscribe-only scope
        ("org1/devices/dev1/status", True),  # its own namespace
        ("org1/devices/dev2/status", False),
        ("org2/sensors", False),
        ("org1/sensors/+", False),
        ("$SYS/broker", False),
        ("", False),
    ],
)
def test_publish(topic: str, allowed: bool) -> None:
    assert RIGHTS.may_publish(topic) is allowed


@pytest.mark.parametrize(
    ("topic_filter", "allowed"),
    [
        ("org1/alarms", True),
        ("org1/alarms/#", True),
        ("org1/alarms/+/high", True),
        ("org1/devices/dev1/#", True),
        ("org1/#", False),
        ("org1/+", False),
        ("org1/+/#", False),
        ("#", False),
        ("+/alarms", False),
        ("org1/sensors/#", False),  # publish-only scope
        ("$SYS/#", False),
        ("$share/g/org1/alarms", False),
        ("org1/alarms/x#", False),
        ("org1/alarms/#/x", False),
        ("org1/devices/+/status", False),
    ],
)
def test_subscribe(topic_filter: str, allowed: bool) -> None:
    assert RIGHTS.may_subscribe(topic_filter) is allowed


def test_project_devices_live_under_their_project() -> None:
    rights = device_rights(root_scope("org1", "p1"), "d", {"/": {"can_subscribe": True}})
    assert rights.may_subscribe("org1/p1/#") and not rights.may_subscribe("org1/#")
    assert not rights.may_subscribe("org1/p2/x")


def test_whole_roots_for_user_tools() -> None:
    rights = scope_rights(publish=[], subscribe=["org1"])
    assert rights.may_subscribe("org1/#") and not rights.may_publish("org1/x")
    assert not rights.may_subscribe("org2/#")


@pytest.mark.parametrize(
    ("scopes", "field"),
    [
        ({"a/+": {}}, "iot_scopes"),
        ({"a/#": {}}, "iot_scopes"),
        ({"a//b": {}}, "iot_scopes"),
        ({"": {}}, "iot_scopes"),
        ({"a": {"can_delete": True}}, "iot_scopes./a.can_delete"),
        ({"a": {"can_publish": "yes"}}, "iot_scopes./a.can_publish"),
        ({"a": {}, "/a": {}}, "iot_scopes"),
    ],
)
def test_bad_scopes_are_refused(scopes: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_scopes("iot_scopes", scopes)
    assert caught.value.field == field


def test_scopes_get_their_leading_slash_and_every_right() -> None:
    assert normalize_scopes("s", {"x/y/": {"can_publish": True}}) == {
        "/x/y": {"can_publish": True, "can_subscribe": False}
    }
