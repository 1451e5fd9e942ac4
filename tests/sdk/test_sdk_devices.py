"""The public `cyphermed` SDK against a live server: every device operation, driven by each
standing (org admin, project admin, group admin, owner, plain user, the device itself with
its API key as the SDK's token, another org), denials next to grants; and every response
parses into the model the caller's view calls for (the SDK tries admin, plain, anonymous
in turn). The callers and devices are the world's (tests/world.py)."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Callable
from typing import Any

import pytest
from cyphermed.api.devices import (
    create_device,
    delete_device_by_id,
    get_device_by_id,
    get_devices,
    key,
    patch_device,
    reset_mqtt_credentials,
)
from cyphermed.api.my_organization import patch_my_org_settings
from cyphermed.client import AuthenticatedClient
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    AdminDeviceInfo,
    AnonDeviceInfo,
    AnonDeviceList,
    CreateDeviceBody,
    CreateDeviceBodyCustomAttributes,
    CreateDeviceBodyIotScopes,
    DeviceInfo,
    DeviceList,
    NewApiKey,
    NewDeviceInfo,
    NewMqttCredentials,
    PatchDeviceBody,
    PatchDeviceBodyIotScopes,
    PatchOrgSettingsBody,
    Success,
)

from tests.world import World, table


async def sdk(base_url: str, token: str | None, call: Callable[[AuthenticatedClient], Any]) -> Any:
    """One synchronous SDK call in a thread, so this loop keeps serving it."""

    def run() -> Any:
        client = AuthenticatedClient(
            base_url=base_url, token=token or "", raise_on_unexpected_status=True
        )
        with client:
            return call(client)

    return await asyncio.to_thread(run)


async def attempt(base_url: str, token: str | None, call: Callable[[Any], Any]) -> tuple[int, Any]:
    try:
        return 200, await sdk(base_url, token, call)
    except UnexpectedStatus as failure:
        return failure.status_code, None


PUMP = CreateDeviceBody(
    name="sdk-pump",
    manufacturer="Acme",
    product="P-1",
    site="Hall A",
    serial_number="SN-9",
    mac_address="00:11:22:33:44:55",
    tags=["sdk"],
    custom_attributes=CreateDeviceBodyCustomAttributes.from_dict({"floor": 3}),
    iot_scopes=CreateDeviceBodyIotScopes.from_dict({"telemetry": {"can_publish": True}}),
)


async def pump(base_url: str, world: World) -> tuple[str, Any]:
    """The org admin's token, and the device "sdk-pump" (owned by `owner`) as the SDK's
    create returned it."""
    admin = await world.token("org_admin")
    body = CreateDeviceBody.from_dict({**PUMP.to_dict(), "owner_id": world.id("owner")})
    created = await sdk(base_url, admin, lambda c: create_device.sync(client=c, body=body))
    assert isinstance(created, NewDeviceInfo)
    return str(admin), created.device


async def test_the_sdk_creates_a_device_and_reads_it_back(base_url: str, world: World) -> None:
    admin, made = await pump(base_url, world)
    assert made.api_key.startswith("edk_") and made.root_scope == world.tenant.org_id
    assert made.root_ca.endswith("/v2/devices/root-ca.pem") and made.broker == "127.0.0.1"
    assert made.owner_id == world.id("owner") and "BEGIN CERTIFICATE" in made.certificate

    got = await sdk(base_url, admin, lambda c: get_device_by_id.sync(made.id, client=c))
    assert isinstance(got, AdminDeviceInfo)
    device = got.device
    assert (device.name, device.manufacturer, device.serial_number) == ("sdk-pump", "Acme", "SN-9")
    assert device.open_tunnels == [] and device.is_active is True
    scopes = device.iot_scopes.additional_properties  # PubSubPermissions per scope
    assert list(scopes) == ["/telemetry"]
    assert (scopes["/telemetry"].can_publish, scopes["/telemetry"].can_subscribe) == (True, False)
    assert isinstance(device.created_date, datetime.datetime)


async def test_the_sdk_lists_devices_by_field_and_by_search(base_url: str, world: World) -> None:
    admin, made = await pump(base_url, world)
    listed = await sdk(
        base_url, admin, lambda c: get_devices.sync(client=c, manufacturer="acme", limit=5)
    )
    # For lists the SDK tries the anonymous model first, then the plain one, then the
    # admin's: an admin's list parses as DeviceList, `is_active` kept as an extra property.
    assert isinstance(listed, DeviceList) and [d.id for d in listed.devices] == [made.id]
    assert listed.devices[0].additional_properties["is_active"] is True
    listed = await sdk(base_url, admin, lambda c: get_devices.sync(client=c, search="hall"))
    assert isinstance(listed, DeviceList) and [d.id for d in listed.devices] == [made.id]


async def test_a_patched_device_reads_itself_with_its_api_key(base_url: str, world: World) -> None:
    admin, made = await pump(base_url, world)
    patch = PatchDeviceBody(
        site="Hall C",
        locale="en_gb",
        iot_scopes=PatchDeviceBodyIotScopes.from_dict({"/alarms": {"can_subscribe": True}}),
    )
    done = await sdk(base_url, admin, lambda c: patch_device.sync(made.id, client=c, body=patch))
    assert isinstance(done, Success)
    # The device itself, with its API key as the SDK's token.
    own = await sdk(base_url, made.api_key, lambda c: get_device_by_id.sync(made.id, client=c))
    assert isinstance(own, DeviceInfo) and not isinstance(own, AdminDeviceInfo)
    assert own.device.site == "Hall C" and own.device.locale == "en-GB"


async def test_a_device_renews_its_api_key_then_its_mqtt_credentials(
    base_url: str, world: World
) -> None:
    _, made = await pump(base_url, world)
    fresh = await sdk(base_url, made.api_key, lambda c: key.sync(made.id, client=c))
    assert isinstance(fresh, NewApiKey) and fresh.api_key != made.api_key
    with pytest.raises(UnexpectedStatus) as revoked:
        await sdk(base_url, made.api_key, lambda c: get_devices.sync(client=c))
    assert revoked.value.status_code == 401
    mqtt = await sdk(
        base_url, fresh.api_key, lambda c: reset_mqtt_credentials.sync(made.id, client=c)
    )
    assert isinstance(mqtt, NewMqttCredentials) and mqtt.certificate != made.certificate
    assert mqtt.root_scope == world.tenant.org_id


async def test_the_sdk_deletes_a_device(base_url: str, world: World) -> None:
    admin, made = await pump(base_url, world)
    done = await sdk(base_url, admin, lambda c: delete_device_by_id.sync(made.id, client=c))
    assert isinstance(done, Success)  # the SDK's default: permanent=false, to the trash
    with pytest.raises(UnexpectedStatus) as gone:
        await sdk(base_url, admin, lambda c: get_device_by_id.sync(made.id, client=c))
    assert gone.value.status_code == 404


async def test_non_admins_get_device_models_and_pii_hidden_gets_anonymous(
    base_url: str, world: World
) -> None:
    reader = await world.token("org_device_perms")
    member = world.id("device_member")
    got = await sdk(base_url, reader, lambda c: get_device_by_id.sync(member, client=c))
    assert isinstance(got, DeviceInfo) and not isinstance(got, AdminDeviceInfo)
    listed = await sdk(base_url, reader, lambda c: get_devices.sync(client=c))
    assert isinstance(listed, DeviceList) and member in {d.id for d in listed.devices}

    admin = await world.token("org_admin")
    settings = PatchOrgSettingsBody(pii_admin_only=True)
    await sdk(base_url, admin, lambda c: patch_my_org_settings.sync(client=c, body=settings))
    got = await sdk(base_url, reader, lambda c: get_device_by_id.sync(member, client=c))
    assert isinstance(got, AnonDeviceInfo) and got.device.username == "device_member"
    listed = await sdk(base_url, reader, lambda c: get_devices.sync(client=c))
    assert isinstance(listed, AnonDeviceList)


# Per caller (every caller of the world, tests/world.py): the status of each operation on
# the device device_member (home project Apollo, a member of Ward, owned by `owner`), in
# this order; create makes a device in Apollo. device_member's own row is the device
# itself, calling with its API key as the SDK's token.
OPERATIONS = ("get", "list", "patch", "mqtt", "key", "delete", "create")
TABLE = {
    "staff": (200, 200, 200, 200, 200, 200, 201),
    "staff_unscoped": (403, 403, 403, 403, 403, 403, 403),
    "org_admin": (200, 200, 200, 200, 200, 200, 201),
    "project_admin": (200, 200, 200, 200, 200, 200, 201),
    "role_admin": (200, 200, 200, 200, 200, 200, 201),
    "org_user_perms": (404, 200, 404, 404, 404, 404, 403),
    "org_group_role_perms": (404, 200, 404, 404, 404, 404, 403),
    "org_project_perms": (404, 200, 404, 404, 404, 404, 403),
    "org_device_perms": (200, 200, 200, 200, 200, 200, 201),
    "project_user_perms": (404, 200, 404, 404, 404, 404, 403),
    "project_group_role_perms": (404, 200, 404, 404, 404, 404, 403),
    "project_device_perms": (200, 200, 200, 200, 200, 200, 201),
    "project_reader": (404, 200, 404, 404, 404, 404, 403),
    "project_updater": (404, 200, 404, 404, 404, 404, 403),
    "group_admin": (200, 200, 200, 200, 200, 200, 403),
    "group_user_perms": (404, 200, 404, 404, 404, 404, 403),
    "group_editor": (404, 200, 404, 404, 404, 404, 403),
    "group_device_perms": (200, 200, 200, 200, 200, 200, 403),
    "member": (404, 200, 404, 404, 404, 404, 403),
    "holder": (404, 200, 404, 404, 404, 404, 403),
    "owner": (200, 200, 403, 403, 403, 403, 403),  # reads their device, no more
    "plain": (404, 200, 404, 404, 404, 404, 403),
    "gemini_user": (404, 200, 404, 404, 404, 404, 403),
    "device_member": (200, 200, 200, 200, 200, 403, 403),  # itself
    "device_loner": (404, 200, 404, 404, 404, 404, 403),
    "device_boss": (200, 200, 200, 200, 200, 200, 201),  # an org admin
    "device_plain": (404, 200, 404, 404, 404, 404, 403),
    "other_admin": (404, 200, 404, 404, 404, 404, 400),  # Apollo is not of their org
}
# The SDK has no anonymous client (an empty token makes an illegal header): anonymous calls
# are tested over HTTP (tests/api/test_devices.py).
NO_SDK_CLIENT = ("anonymous",)


@pytest.mark.parametrize(("who", "expected"), table(TABLE, not_applicable=NO_SDK_CLIENT))
async def test_every_device_operation_by_role(
    base_url: str, world: World, who: str, expected: tuple[int, ...]
) -> None:
    member = world.id("device_member")
    token = await world.token(who)
    body = CreateDeviceBody(name="made-by-sdk", project_id=world.project_id)
    calls: dict[str, Callable[[Any], Any]] = {
        "get": lambda c: get_device_by_id.sync(member, client=c),
        "list": lambda c: get_devices.sync(client=c),
        "patch": lambda c: patch_device.sync(member, client=c, body=PatchDeviceBody(site="X")),
        "mqtt": lambda c: reset_mqtt_credentials.sync(member, client=c),
        "key": lambda c: key.sync(member, client=c),
        "delete": lambda c: delete_device_by_id.sync(member, client=c),
        "create": lambda c: create_device.sync(client=c, body=body),
    }
    statuses = []
    for name in OPERATIONS:
        status, parsed = await attempt(base_url, token, calls[name])
        statuses.append(201 if name == "create" and status == 200 else status)
        if name == "key" and who == "device_member" and status == 200:
            token = parsed.api_key  # the old key stopped working: carry on with the new one
        if name == "list" and status == 200:
            ids = {d.id for d in parsed.devices}
            assert (member in ids) == (expected[0] == 200), ids
    assert tuple(statuses) == expected
