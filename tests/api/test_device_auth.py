"""Devices as principals over HTTP: the API key as a bearer token (as the SDK sends it) or
in `X-API-Key`, without token verification; cached, and refused at once after a reset,
a suspension or a delete, made here or by another process; `last_seen` written in
batches, never once per request; the public CA certificate."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from edge.app import Site
from edge.devices import credentials
from edge.devices.last_seen import LastSeen
from edge.kernel import logs
from edge.kernel.errors import Unauthenticated
from storage import devices as device_store
from tests.conftest import Api, make_config
from tests.spies import calls_of
from tests.waiting import eventually
from tests.world import World


async def as_key(world: World, key: str, path: str, header: str = "bearer") -> Any:
    headers = {"X-API-Key": key} if header == "x-api-key" else {"Authorization": f"Bearer {key}"}
    return await world.api.call("GET", path, headers=headers)


@pytest.mark.parametrize("header", ["bearer", "x-api-key"])
async def test_a_device_authenticates_with_its_key(world: World, header: str) -> None:
    key, device_id = world.keys["device_member"], world.id("device_member")
    status, body = await as_key(world, key, f"/v2/devices/{device_id}", header)
    assert status == 200 and body["device"]["id"] == device_id
    status, body = await as_key(world, key, "/v2/account/access/current-session", header)
    assert status == 200 and body["org_permissions"]["is_admin"] is False
    status, body = await as_key(world, "edk_" + "x" * 43, "/v2/devices", header)
    assert (status, body) == (401, {"message": "Invalid API key"})


async def test_a_key_in_x_api_key_wins_over_nothing_and_staff_routes_refuse(
    world: World,
) -> None:
    status, body = await as_key(world, "not-a-key", "/v2/devices", "x-api-key")
    assert (status, body) == (401, {"message": "Invalid API key"})
    status, body = await as_key(world, world.keys["device_member"], "/v2/orgs")
    assert (status, body) == (403, {"message": "Only staff may do this"})


async def test_the_key_path_verifies_no_token_and_is_cached(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_tokens(token: str) -> Any:
        raise AssertionError("an API key must not go through token verification")

    monkeypatch.setattr(world.site.services.tokens, "verify", no_tokens)
    lookups = calls_of(monkeypatch, device_store, "by_key_hash")
    path = f"/v2/devices/{world.id('device_member')}"
    for _ in range(5):
        status, _ = await as_key(world, world.keys["device_member"], path)
        assert status == 200
    assert len(lookups) == 1
    assert credentials.key_hash(world.keys["device_member"]) == lookups[0]


async def test_reset_revokes_the_old_key_at_once(world: World) -> None:
    old, path = world.keys["device_loner"], f"/v2/devices/{world.id('device_loner')}"
    assert (await as_key(world, old, path))[0] == 200  # cached now
    status, body = await world.api.call("POST", path + "/reset-api-key", old)
    assert status == 200
    assert await as_key(world, old, path) == (401, {"message": "Invalid API key"})
    assert (await as_key(world, body["api_key"], path))[0] == 200


@pytest.mark.parametrize(
    "change",
    [
        {"is_active": False},
        {"api_key_hash": credentials.key_hash("edk_another")},
    ],
    ids=["suspended", "key-replaced"],
)
async def test_changes_made_by_another_process_count_at_once(
    world: World, change: dict[str, Any]
) -> None:
    """Written straight to the database (as another worker would): only the auth epoch
    tells this process's cache."""
    key, device_id = world.keys["device_member"], world.id("device_member")
    assert (await as_key(world, key, "/v2/devices"))[0] == 200
    await world.site.services.db.write(lambda c: device_store.patch(c, device_id, change))
    assert (await as_key(world, key, "/v2/devices"))[0] == 401


async def test_deleted_devices_are_refused(world: World) -> None:
    key, device_id = world.keys["device_member"], world.id("device_member")
    assert (await as_key(world, key, "/v2/devices"))[0] == 200
    await world.site.services.db.write(
        lambda c: c.execute("DELETE FROM devices WHERE id = ?", (device_id,))
    )
    assert await as_key(world, key, "/v2/devices") == (401, {"message": "Invalid API key"})


def test_a_key_that_matches_no_hash_is_refused_in_constant_time() -> None:
    key, digest = credentials.new_api_key()
    assert credentials.matches(key, digest)
    assert not credentials.matches(key + "x", digest) and not credentials.matches(key, None)
    assert len(key) == 4 + 43  # the prefix and 256 random bits, base64url


# -- last_seen -------------------------------------------------------------------------------
async def test_last_seen_is_written_in_batches_not_per_request(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No request writes; one flush writes what forty requests saw, in one statement. The
    site's own background writes (a scheduler's tick) may come meanwhile: they are not
    the requests', so only writes made while answering a request count."""
    services = world.site.services
    request_writes: list[Any] = []
    original = services.db.write

    async def counted(fn: Any) -> Any:
        if logs.current_request.get() is not None:
            request_writes.append(fn)
        return await original(fn)

    monkeypatch.setattr(services.db, "write", counted)
    batches = calls_of(monkeypatch, device_store, "mark_seen")
    for name in ("device_member", "device_loner"):
        for _ in range(20):
            status, _ = await as_key(world, world.keys[name], f"/v2/devices/{world.id(name)}")
            assert status == 200
    assert request_writes == [] and batches == [] and services.last_seen.pending == 2
    assert await services.last_seen.flush() == 2
    assert [set(batch) for batch in batches] == [
        {world.id("device_member"), world.id("device_loner")}
    ]
    seen = services.db.read(
        lambda c: device_store.last_seen(c, [world.id("device_member"), world.id("device_loner")])
    )
    assert set(seen) == {world.id("device_member"), world.id("device_loner")}
    status, body = await world.call("org_admin", "GET", f"/v2/devices/{world.id('device_member')}")
    assert body["device"]["last_seen"] == seen[world.id("device_member")]


async def test_the_flusher_runs_on_a_timer_and_once_more_on_stop(world: World) -> None:
    db = world.site.services.db
    last_seen = LastSeen(db, interval=0.01)
    stop = asyncio.Event()
    task = asyncio.create_task(last_seen.run(stop))
    last_seen.seen(world.id("device_member"))
    await eventually(  # the timer's flush, without a stop (a flush at stop alone fails here)
        lambda: db.read(lambda c: device_store.last_seen(c, [world.id("device_member")])),
        "the timer flushed last_seen",
    )
    last_seen.seen(world.id("device_loner"))
    last_seen.seen("an-id-of-no-device")  # skipped, not an error
    stop.set()
    await task
    assert db.read(lambda c: device_store.last_seen(c, [world.id("device_loner")]))


async def test_keys_verify_counts_activity(world: World) -> None:
    keys = world.site.services.device_keys
    assert keys.verify(world.keys["device_boss"]).account_id == world.id("device_boss")
    with pytest.raises(Unauthenticated):
        keys.verify("edk_nothing")
    assert world.site.services.last_seen.pending == 1


# -- the CA ----------------------------------------------------------------------------------
async def test_root_ca_is_public_pem_and_signs_device_certificates(world: World, api: Api) -> None:
    response = await api.client.get("/v2/devices/root-ca.pem")
    assert response.status == 200 and response.content_type == "application/x-pem-file"
    pem = await response.read()
    assert pem == (world.site.services.config.data_dir / "ca" / "ca.pem").read_bytes()
    status, reply = await world.call("org_admin", "POST", "/v2/devices", json={"name": "new"})
    assert status == 201
    issued = x509.load_pem_x509_certificate(reply["device"]["certificate"].encode())
    issued.verify_directly_issued_by(x509.load_pem_x509_certificate(pem))
    common_name = issued.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value
    assert common_name == reply["device"]["id"]
    key_file = world.site.services.config.data_dir / "ca" / "ca.key"
    assert key_file.stat().st_mode & 0o077 == 0  # the CA key is owner-only


@pytest.mark.parametrize(
    ("accept", "kind"),
    [
        ("text/plain", "text/plain"),
        ("text/plain;q=0.9, */*;q=0.1", "text/plain"),
        ("application/x-pem-file, text/plain", "application/x-pem-file"),
        ("*/*", "application/x-pem-file"),
    ],
)
async def test_root_ca_is_text_for_a_client_that_asks_for_text(
    api: Api, accept: str, kind: str
) -> None:
    """The document lists both types (a generated client knows text/plain, not the PEM
    type); the bytes are the same."""
    response = await api.client.get("/v2/devices/root-ca.pem", headers={"Accept": accept})
    assert (response.status, response.content_type) == (200, kind)
    assert (await response.text()).startswith("-----BEGIN CERTIFICATE-----")


def test_broker_host_is_configurable(site: Site, tmp_path: Path) -> None:
    """`broker`: the mqtt_broker_host setting, else the host of the public URL."""
    assert site.services.config.broker_host == "127.0.0.1"
    assert make_config(tmp_path / "a", mqtt_broker_host="mqtt.lan").broker_host == "mqtt.lan"
    config = make_config(tmp_path / "b", public_url="https://edge.plant.example:8443/")
    assert config.broker_host == "edge.plant.example"
