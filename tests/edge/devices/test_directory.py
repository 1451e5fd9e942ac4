"""The ClientDirectory the broker asks: devices by API key and by certificate (refused by
serial after a reset, though the CA's signature still holds), user tools by access token
with rights from their device permissions, `still_allowed` after every kind of change,
the epoch, and `seen`. The devices and callers are the world's (tests/world.py)."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from edge.app import Site
from edge.certificates.ca import SiteCa
from edge.devices.directory import DeviceDirectory
from edge.devices.mqtt_clients import MqttClient
from edge.kernel.principal import Principal
from storage import devices as device_store
from tests.world import ALL, World


@pytest.fixture
def directory(site: Site) -> DeviceDirectory:
    return site.services.device_directory


def admin(world: World) -> Principal:
    return Principal("user", world.tenant.admin_id, "session", world.tenant.org_id)


def der(pem: str) -> bytes:
    cert = x509.load_pem_x509_certificate(pem.encode())
    return cert.public_bytes(serialization.Encoding.DER)


async def new_device(world: World, **body: Any) -> dict[str, Any]:
    made = await world.site.services.devices.create(admin(world), {"name": "pump", **body})
    return made


# -- devices ---------------------------------------------------------------------------------
async def test_by_api_key(world: World, directory: DeviceDirectory) -> None:
    device_id, key = world.id("device_member"), world.keys["device_member"]
    client = directory.by_api_key(device_id, key)
    assert client is not None and client.kind == "device" and client.credential == "api_key"
    root = f"{world.tenant.org_id}/{world.project_id}"
    assert client.root_scope == root and client.org_id == world.tenant.org_id
    assert client.rights.may_publish(f"{root}/devices/{device_id}/status")
    assert not client.rights.may_publish(f"{root}/elsewhere")
    assert directory.by_api_key(world.id("device_loner"), key) is None  # not its key
    assert directory.by_api_key(device_id, key + "x") is None
    assert directory.by_api_key(device_id, "not-a-key") is None


async def test_by_certificate_refuses_a_reset_certificate_by_serial(
    world: World, directory: DeviceDirectory
) -> None:
    made = await new_device(world, iot_scopes={"telemetry": {"can_publish": True}})
    old = der(made["certificate"])
    client = directory.by_certificate(old)
    assert client is not None and client.account_id == made["id"]
    assert client.credential == "certificate"
    assert client.rights.may_publish(f"{world.tenant.org_id}/telemetry/temp")
    fresh = await world.site.services.devices.reset_mqtt_credentials(admin(world), made["id"])
    assert world.site.services.site_ca.issued(old) is not None  # the signature still holds
    assert directory.by_certificate(old) is None  # but the registry refuses the serial
    assert directory.still_allowed(client) is False
    renewed = directory.by_certificate(der(fresh["certificate"]))
    assert renewed is not None and renewed.stamp != client.stamp


async def test_certificates_of_another_ca_or_garbage_are_refused(
    world: World, directory: DeviceDirectory, tmp_path: Any
) -> None:
    stranger = SiteCa.open(tmp_path / "elsewhere").issue_client("x", world.tenant.org_id)
    assert directory.by_certificate(der(stranger.certificate)) is None
    assert directory.by_certificate(b"not a certificate") is None


@pytest.mark.parametrize(
    "change",
    [
        {"is_active": False},
        {"iot_scopes": {"/x": {"can_publish": True, "can_subscribe": False}}},
        {"project_id": None},
    ],
    ids=["suspended", "scopes-changed", "moved"],
)
async def test_a_device_stops_being_allowed_when_it_changes(
    world: World, directory: DeviceDirectory, change: dict[str, Any]
) -> None:
    made = await new_device(world, project_id=world.project_id)
    clients = [
        directory.by_api_key(made["id"], made["api_key"]),
        directory.by_certificate(der(made["certificate"])),
    ]
    for client in clients:
        assert client is not None and directory.still_allowed(client)
    before = directory.epoch()
    await world.site.services.db.write(lambda c: device_store.patch(c, made["id"], change))
    assert directory.epoch() > before
    assert [directory.still_allowed(c) for c in clients if c is not None] == [False, False]


async def test_a_reset_key_or_a_deleted_device_drops_its_clients(
    world: World, directory: DeviceDirectory
) -> None:
    made = await new_device(world)
    services = world.site.services
    by_key = directory.by_api_key(made["id"], made["api_key"])
    by_cert = directory.by_certificate(der(made["certificate"]))
    assert by_key is not None and by_cert is not None
    before = directory.epoch()
    await services.devices.reset_api_key(admin(world), made["id"])
    assert directory.epoch() > before
    assert not directory.still_allowed(by_key) and directory.still_allowed(by_cert)
    await services.devices.delete(admin(world), made["id"], force=False, permanent=False)
    assert not directory.still_allowed(by_cert)
    assert directory.by_certificate(der(made["certificate"])) is None


async def test_resume_gives_a_stored_session_its_client_while_its_credential_holds(
    world: World, directory: DeviceDirectory
) -> None:
    """A persistent session read back after a restart: its owner's current client, or None
    once the credential it connected with was reset or the device is gone."""
    made = await new_device(world, iot_scopes={"telemetry": {"can_publish": True}})
    services = world.site.services
    by_key = directory.by_api_key(made["id"], made["api_key"])
    by_cert = directory.by_certificate(der(made["certificate"]))
    assert by_key is not None and by_cert is not None
    for client in (by_key, by_cert):
        resumed = directory.resume("device", client.account_id, client.credential, client.stamp)
        assert resumed == client
    assert directory.resume("device", made["id"], "api_key", "another-hash") is None
    assert directory.resume("device", made["id"], "token", by_key.stamp) is None
    await services.devices.reset_api_key(admin(world), made["id"])
    assert directory.resume("device", made["id"], "api_key", by_key.stamp) is None
    assert directory.resume("device", made["id"], "certificate", by_cert.stamp) == by_cert
    await services.devices.delete(admin(world), made["id"], force=False, permanent=False)
    assert directory.resume("device", made["id"], "certificate", by_cert.stamp) is None
    user = await user_client(world, directory, "project_device_perms")
    assert directory.resume("user", user.account_id, "token", user.stamp) == user
    await services.tokens.revoke_session(user.stamp)
    assert directory.resume("user", user.account_id, "token", user.stamp) is None


async def test_suspended_devices_cannot_connect(world: World, directory: DeviceDirectory) -> None:
    made = await new_device(world, is_active=False)
    assert directory.by_api_key(made["id"], made["api_key"]) is None
    assert directory.by_certificate(der(made["certificate"])) is None


async def test_seen_is_batched(world: World, directory: DeviceDirectory) -> None:
    directory.seen(world.id("device_member"))
    directory.seen(world.id("device_member"))
    assert world.site.services.last_seen.pending == 1
    assert await world.site.services.last_seen.flush() == 1


# -- user tools ------------------------------------------------------------------------------
async def user_client(world: World, directory: DeviceDirectory, who: str, **kw: Any) -> Any:
    token = await world.token(who, **kw)
    assert token is not None
    return directory.by_access_token(token)


async def test_user_tools_get_rights_from_device_permissions(
    world: World, directory: DeviceDirectory
) -> None:
    org, project = world.tenant.org_id, world.project_id
    boss = await user_client(world, directory, "org_admin")
    assert boss.root_scope == org and boss.kind == "user" and boss.credential == "token"
    assert boss.rights.may_subscribe(f"{org}/#") and boss.rights.may_publish(f"{org}/x")

    reader = await world.add_user("reader")
    await world.grant("org", org, reader, device_permissions={"can_read": True})
    client = await user_client(world, directory, "reader")
    assert client.rights.may_subscribe(f"{org}/#") and not client.rights.may_publish(f"{org}/x")

    block = await user_client(world, directory, "project_device_perms")  # every flag on Apollo
    assert block.rights.may_subscribe(f"{org}/{project}/#")
    assert block.rights.may_publish(f"{org}/{project}/x")
    assert not block.rights.may_subscribe(f"{org}/#")
    assert not block.rights.may_publish(f"{org}/other/x")

    assert await user_client(world, directory, "plain") is None
    assert await user_client(world, directory, "group_device_perms") is None  # groups: no root
    assert directory.by_access_token("not-a-token") is None
    assert directory.by_access_token(world.keys["device_member"]) is None


async def test_a_project_session_reaches_only_its_project(
    world: World, directory: DeviceDirectory
) -> None:
    org, project = world.tenant.org_id, world.project_id
    client = await user_client(world, directory, "org_admin", project_id=project)
    assert client.root_scope == f"{org}/{project}"
    assert client.rights.may_subscribe(f"{org}/{project}/#")
    assert not client.rights.may_subscribe(f"{org}/#")


async def test_user_tools_stop_when_their_session_or_permissions_end(
    world: World, directory: DeviceDirectory
) -> None:
    services = world.site.services
    client: MqttClient = await user_client(world, directory, "project_device_perms")
    assert directory.still_allowed(client)
    found = services.db.read(
        lambda c: c.execute(
            "SELECT id FROM access WHERE grantee_id = ? AND kind = 'project'",
            (world.id("project_device_perms"),),
        ).fetchone()
    )
    before = directory.epoch()
    await services.db.write(
        lambda c: c.execute(
            "UPDATE access SET permissions = json_set(permissions,"
            " '$.device_permissions.can_update', json('false')) WHERE id = ?",
            (found[0],),
        )
    )
    assert directory.epoch() > before  # the access epoch counts too
    assert not directory.still_allowed(client)  # lost publish rights: reconnect
    client = await user_client(world, directory, "project_device_perms")
    assert directory.still_allowed(client)
    await services.tokens.revoke_session(client.stamp)
    assert not directory.still_allowed(client)


async def test_grants_reach_devices_as_grantees(world: World) -> None:
    loner = world.id("device_loner")
    await world.grant("org", world.tenant.org_id, loner, "device", device_permissions=ALL)
    caller = world.site.services.permissions.caller(
        Principal("device", loner, None, world.tenant.org_id)
    )
    assert caller.sees_all("device") and not caller.sees_all("user")
