"""Device twins over HTTP (docs/twins.md): who may read, set `desired` and report
`reported` (role-by-role tables over the world's callers, denials next to grants, the
devices themselves among them), the merge patch with its metadata and version, version
conflicts by `version` and by `If-Match`, the limits, and the trash.

The targets are the world's devices (tests/world.py): device_member, device_loner and
device_boss, each also a caller with its own API key, so "the device itself" is the row
of a target acting on itself; another device is any other device's row; another org is
`other_admin`.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from edge.kernel.errors import NotFound
from edge.twins.twins import TwinChanged, Twins, Update
from storage import twins as twin_store
from tests.api.test_devices import READ, UPDATE
from tests.world import DEVICE_TARGETS, Notices, World, target_table

# desired: as PATCH of the device, but never by the device itself (it reports)
DESIRED = {
    **UPDATE,
    "device_member": (403, 404, 404),
    "device_loner": (404, 403, 404),
    "device_boss": (200, 200, 403),
}


def _reported_row(who: str, statuses: tuple[int, int, int]) -> tuple[int, int, int]:
    """Those who see the device are refused (403), the device itself alone reports."""
    return tuple(  # type: ignore[return-value]
        200 if who == target else 403 if status == 200 else status
        for target, status in zip(DEVICE_TARGETS, statuses, strict=True)
    )


REPORTED = {who: _reported_row(who, statuses) for who, statuses in READ.items()}


def twin_path(world: World, target: str = "device_member") -> str:
    return f"/v2/devices/{world.id(target)}/twin"


def twins(world: World) -> Twins:
    return world.site.services.twins


def deltas(world: World) -> Notices:
    """Keep what the twins tell devices instead of sending it over MQTT."""
    kept = Notices()
    twins(world).notify = kept
    return kept


async def patch(world: World, body: dict[str, Any], who: str = "org_admin", **kw: Any) -> Any:
    status, reply = await world.call(who, "PATCH", twin_path(world), json=body, **kw)
    assert status == 200, reply
    return reply["twin"]


@pytest.mark.parametrize(("who", "target", "expected"), target_table(READ, DEVICE_TARGETS))
async def test_get_twin_by_role(world: World, who: str, target: str, expected: int) -> None:
    status, body = await world.call(who, "GET", twin_path(world, target))
    assert status == expected, body
    if status == 200:
        assert body["twin"] == {
            "device_id": world.id(target),
            "desired": {},
            "reported": {},
            "delta": {},
            "metadata": {"desired": {}, "reported": {}},
            "version": 0,
        }


@pytest.mark.parametrize(("who", "target", "expected"), target_table(DESIRED, DEVICE_TARGETS))
async def test_set_desired_by_role(world: World, who: str, target: str, expected: int) -> None:
    body = {"desired": {"interval": 30}}
    status, reply = await world.call(who, "PATCH", twin_path(world, target), json=body)
    assert status == expected, reply
    twin = twins(world).current(world.id(target))
    assert twin.desired == ({"interval": 30} if status == 200 else {})
    assert twin.version == (1 if status == 200 else 0)


@pytest.mark.parametrize(("who", "target", "expected"), target_table(REPORTED, DEVICE_TARGETS))
async def test_report_by_role(world: World, who: str, target: str, expected: int) -> None:
    body = {"reported": {"firmware": "1.2"}}
    status, reply = await world.call(who, "PATCH", twin_path(world, target), json=body)
    assert status == expected, reply
    twin = twins(world).current(world.id(target))
    assert twin.reported == ({"firmware": "1.2"} if status == 200 else {})


async def test_owner_sets_desired_where_owners_are_admins(world: World) -> None:
    """The owner only reads until the settings make owners admins of their devices."""
    body = {"desired": {"mode": "eco"}}
    status, _ = await world.call("owner", "PATCH", twin_path(world), json=body)
    assert status == 403
    setting = {"device_owners_have_admin_access": True}  # device_member's project's
    status, reply = await world.call(
        "org_admin", "PATCH", f"/v2/projects/{world.project_id}", json=setting
    )
    assert status == 200, reply
    status, reply = await world.call("owner", "PATCH", twin_path(world), json=body)
    assert status == 200, reply


async def test_merge_patch_metadata_version_and_delta(world: World) -> None:
    kept = deltas(world)
    first = await patch(world, {"desired": {"led": {"color": "red", "level": 3}, "fan": "on"}})
    assert first["version"] == 1
    assert first["delta"] == {"led": {"color": "red", "level": 3}, "fan": "on"}
    stamp = first["metadata"]["desired"]["led"]["color"]
    assert stamp == first["updated_date"] and stamp.endswith("Z")
    reported = await patch(world, {"reported": {"led": {"color": "red"}}}, "device_member")
    assert reported["version"] == 2
    assert reported["delta"] == {"led": {"level": 3}, "fan": "on"}
    assert reported["metadata"]["desired"]["led"]["color"] == stamp  # untouched leaves keep theirs
    second = await patch(world, {"desired": {"led": {"level": None}, "fan": None, "new": [1, 2]}})
    assert second["desired"] == {"led": {"color": "red"}, "new": [1, 2]}
    assert second["metadata"]["desired"] == {
        "led": {"color": stamp},
        "new": second["updated_date"],
    }
    assert second["delta"] == {"new": [1, 2]} and second["version"] == 3
    topic = f"{world.tenant.org_id}/{world.project_id}/devices/{world.id('device_member')}"
    assert [(d, t) for d, t, _ in kept.sent] == [
        (world.id("device_member"), f"{topic}/twin/update/delta")
    ] * 2
    assert kept.sent[-1][2]["delta"] == {"new": [1, 2]} and kept.sent[-1][2]["version"] == 3
    cleared = await patch(world, {"desired": None})
    assert cleared["desired"] == {} and cleared["metadata"]["desired"] == {}
    assert len(kept.sent) == 2  # nothing left to apply: no delta


async def test_a_report_alone_sends_no_delta(world: World) -> None:
    """As AWS's shadow: a delta follows a change of desired (and a subscription)."""
    await patch(world, {"desired": {"a": 1, "b": 2}})
    kept = deltas(world)
    await patch(world, {"reported": {"a": 1}}, "device_member")
    assert kept.sent == []


async def test_version_conflicts(world: World) -> None:
    await patch(world, {"desired": {"a": 1}})
    status, body = await world.call(
        "org_admin", "PATCH", twin_path(world), json={"desired": {"a": 2}, "version": 0}
    )
    assert status == 409 and "version 1" in body["message"], body
    headers = {"If-Match": '"0"'}
    status, body = await world.call(
        "org_admin", "PATCH", twin_path(world), json={"desired": {"a": 2}}, headers=headers
    )
    assert status == 409 and "version 1" in body["message"], body
    assert twins(world).current(world.id("device_member")).desired == {"a": 1}
    response = await world.api.client.get(  # type: ignore[union-attr]
        twin_path(world), headers={"Authorization": f"Bearer {await world.token('org_admin')}"}
    )
    assert response.headers["ETag"] == '"1"'
    done = await patch(world, {"desired": {"a": 2}}, headers={"If-Match": response.headers["ETag"]})
    assert done["version"] == 2
    done = await patch(world, {"desired": {"a": 3}, "version": 2})
    assert done["version"] == 3
    done = await patch(world, {"desired": {"a": 4}, "version": 3.0})  # JSON's 3.0 is 3
    assert done["version"] == 4


def _nested(levels: int) -> dict[str, Any]:
    """Objects nested `levels` deep, the section itself the first."""
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"level": value}
    return value


async def test_eight_levels_are_allowed(world: World) -> None:
    assert (await patch(world, {"desired": _nested(8)}))["version"] == 1


@pytest.mark.parametrize(
    ("body", "headers", "status", "words"),
    [
        ({"desired": {"blob": "x" * 9000}}, {}, 400, "over the limit of 8192"),
        ({"desired": _nested(9)}, {}, 400, "8 levels"),
        ({"desired": {"k" * 129: 1}}, {}, 400, "1 to 128 characters"),
        ({"desired": {"": 1}}, {}, 400, "1 to 128 characters"),
        ({"desired": [1]}, {}, 406, "desired"),
        ({"desired": {}, "extra": 1}, {}, 406, "extra"),
        ({}, {}, 406, "desired or reported"),
        ({"desired": {"a": 1}, "version": -1}, {}, 400, "version"),
        ({"desired": {"a": 1}}, {"If-Match": "yesterday"}, 400, "If-Match"),
        ({"desired": {"a": 1}, "version": 3}, {"If-Match": '"2"'}, 400, "If-Match"),
        # If-Match compares strongly (RFC 9110 13.1.1): a weak tag never matches (#29)
        ({"desired": {"a": 1}}, {"If-Match": 'W/"0"'}, 400, "If-Match: must be a strong ETag"),
        ({"desired": {"\u0000": 1}}, {}, 400, "desired: keys must not hold control characters"),
        ({"desired": {"a\nb": 1}}, {}, 400, "desired: keys must not hold control"),
        ({"desired": {"a": {"b\u007f": 1}}}, {}, 400, "desired.a: keys must not hold control"),
        ({"desired": {"a": [{"\u001f": 1}]}}, {}, 400, "desired.a: keys must not hold control"),
    ],
)
async def test_refusals_name_their_rule(
    world: World, body: Any, headers: dict[str, str], status: int, words: str
) -> None:
    got, reply = await world.call(
        "org_admin", "PATCH", twin_path(world), json=body, headers=headers
    )
    assert got == status and words in reply["message"], reply
    assert twins(world).current(world.id("device_member")).version == 0


async def test_keys_may_hold_any_other_character_and_a_control_key_may_be_removed(
    world: World,
) -> None:
    """The control characters alone are refused: tabs' neighbours, spaces, U+0080 and
    beyond are keys as any other; a key stored before the rule (written here past the
    check) can still be removed with null (#29)."""
    keys = {" a b ", "\u0080", "é", "\u2028", "~", "日本"}
    done = await patch(world, {"desired": dict.fromkeys(keys, 1)})
    assert set(done["desired"]) == keys
    now = twins(world).current(world.id("device_member"))
    legacy = replace(now, desired={**now.desired, "\u0000": 1}, version=now.version + 1)
    await twins(world).db.write(lambda conn: twin_store.put(conn, legacy))
    done = await patch(world, {"desired": {"\u0000": None}})
    assert set(done["desired"]) == keys and done["version"] == 3


async def test_a_weak_if_match_writes_nothing_and_a_strong_one_still_writes(
    world: World,
) -> None:
    """`W/"1"` names the version the twin is at, and is still refused: a weak tag never
    satisfies If-Match. The strong `"1"` (the ETag a GET gives) writes."""
    await patch(world, {"desired": {"a": 1}})
    weak = {"If-Match": 'W/"1"'}
    status, body = await world.call(
        "org_admin", "PATCH", twin_path(world), json={"desired": {"a": 2}}, headers=weak
    )
    assert (status, set(body)) == (400, {"message"}) and "RFC 9110" in body["message"]
    assert twins(world).current(world.id("device_member")).desired == {"a": 1}
    done = await patch(world, {"desired": {"a": 2}}, headers={"If-Match": '"1"'})
    assert done["version"] == 2


async def test_the_size_limit_counts_both_sections(world: World) -> None:
    await patch(world, {"desired": {"a": "x" * 5000}})
    status, body = await world.call(
        "device_member", "PATCH", twin_path(world), json={"reported": {"a": "y" * 5000}}
    )
    assert status == 400 and "8192" in body["message"], body


async def test_the_twin_goes_to_the_trash_and_comes_back_with_its_device(world: World) -> None:
    await patch(world, {"desired": {"mode": "eco"}})
    await patch(world, {"reported": {"mode": "max"}}, "device_member")
    before = twins(world).current(world.id("device_member"))
    device_id = world.id("device_member")
    status, body = await world.call("org_admin", "DELETE", f"/v2/devices/{device_id}")
    assert status == 200, body
    status, body = await world.call("org_admin", "GET", twin_path(world))
    assert status == 404, body
    assert twins(world).current(device_id).version == 0  # the row left with the device
    status, body = await world.call("org_admin", "POST", f"/v2/trash/{device_id}/restore")
    assert status == 200, body
    assert twins(world).current(device_id) == before


async def test_an_update_whose_device_went_after_its_check_is_refused(world: World) -> None:
    """The write reads the device's row and its twin's in one probe (storage/twins.py):
    a device with no twin yet is found and gets version 1, one with a twin gets the next,
    and one deleted between the handler's check and the write is a 404 that writes
    nothing."""
    device = world.device("device_loner")
    assert (await twins(world).apply(device, Update({"desired": {"a": 1}}, None))).version == 1
    assert (await twins(world).apply(device, Update({"desired": {"a": 2}}, 1))).version == 2
    status, body = await world.call("org_admin", "DELETE", f"/v2/devices/{device.id}")
    assert status == 200, body
    with pytest.raises(NotFound):
        await twins(world).apply(device, Update({"desired": {"a": 3}}, None))
    assert twins(world).current(device.id).version == 0


async def test_the_twin_goes_and_comes_back_with_its_project(world: World) -> None:
    await patch(world, {"desired": {"mode": "eco"}})
    before = twins(world).current(world.id("device_member"))
    path = f"/v2/projects/{world.project_id}"
    status, body = await world.call("org_admin", "DELETE", path, params={"force": "true"})
    assert status == 200, body
    assert twins(world).current(world.id("device_member")).version == 0
    status, body = await world.call("org_admin", "POST", f"/v2/trash/{world.project_id}/restore")
    assert status == 200, body
    assert twins(world).current(world.id("device_member")) == before


async def test_listeners_hear_of_each_accepted_update_after_its_commit(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    heard: list[tuple[str, int, dict[str, Any]]] = []

    def listener(event: TwinChanged) -> None:
        stored = twins(world).current(event.device.id)  # committed before anyone hears of it
        heard.append((event.device.id, event.twin.version, stored.desired))

    def failing(event: TwinChanged) -> None:
        raise RuntimeError("a listener's own fault")

    twins(world).changes.listen(failing)
    twins(world).changes.listen(listener)
    await patch(world, {"desired": {"a": 1}})
    status, _ = await world.call(
        "org_admin", "PATCH", twin_path(world), json={"desired": {"a": 2}, "version": 0}
    )
    assert status == 409  # refused: nobody hears of it
    await patch(world, {"reported": {"a": 1}}, "device_member")
    device_id = world.id("device_member")
    assert heard == [(device_id, 1, {"a": 1}), (device_id, 2, {"a": 1})]
    assert caplog.text.count("twins: a listener failed") == 2
    assert '"a": 1' not in caplog.text and "'a': 1" not in caplog.text  # no document values


async def test_the_routes_are_tagged_as_extensions(world: World) -> None:
    status, document = await world.call("anonymous", "GET", "/v2/openapi.json")
    assert status == 200
    operations = document["paths"]["/v2/devices/{device_id}/twin"]
    assert set(operations) >= {"get", "patch"}
    for method in ("get", "patch"):
        assert "extensions" in operations[method]["tags"]


async def test_two_updates_against_one_version_never_both_apply(world: World) -> None:
    """Sent at once (they may share one group commit), each reads what the one before wrote."""
    calls = [
        world.call(
            "org_admin", "PATCH", twin_path(world), json={"desired": {"by": n}, "version": 0}
        )
        for n in range(4)
    ]
    statuses = sorted(status for status, _ in await asyncio.gather(*calls))
    assert statuses == [200, 409, 409, 409]
    assert twins(world).current(world.id("device_member")).version == 1
