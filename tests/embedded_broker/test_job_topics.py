"""Jobs over MQTT (docs/jobs.md), with real paho clients against the embedded broker and
real HTTP: notify-next at QoS 1 when an execution is released, at once on subscribing and
again on reconnecting; `get` and `update` answered on `accepted`/`rejected` (version
conflicts with the current version, the `client_token` echoed); an update durable before
its acknowledgement; notify-next and the replies delivered to the device's own sessions
only (a user tool or another device subscribed to its job topics hears nothing); and the
job topics refused to anyone else (another device, a user tool), notify-next and the
replies to the device itself.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any
from unittest.mock import ANY

import pytest

from edge.jobs.progress import Changes
from edge.kernel.errors import NotFound
from embedded_broker import frames
from storage import devices as device_store
from storage import jobs as job_store
from tests.embedded_broker.clients import Client
from tests.embedded_broker.conftest import Device, Harness
from tests.embedded_broker.test_commands import heard_before_a_marker, onlookers
from tests.embedded_broker.test_twin_topics import SUBACK, _subscribe_flood

pytestmark = pytest.mark.world(jobs_tick_seconds=3600)
EVERYTHING = {"/": {"can_publish": True, "can_subscribe": True}}


def jobs(device: Device) -> str:
    return f"{device.root}/devices/{device.id}/jobs"


async def new_job(broker: Harness, *devices: Device, **body: Any) -> str:
    targets = {"device_ids": [d.id for d in devices]}
    status, reply = await broker.call(
        "POST", "/v2/jobs", json={"document": {"fw": "3"}, "targets": targets, **body}
    )
    assert status == 201, reply
    await broker.site.services.job_scheduler.tick()
    return str(reply["job"]["id"])


async def next_json(client: Client) -> tuple[str, dict[str, Any]]:
    got = await client.next_message()
    return got.topic, json.loads(got.payload)


async def notified(broker: Harness, device: Device, client_id: str = "d") -> Client:
    """The device, connected and subscribed to its notify-next and its replies."""
    client = await broker.connected(device, client_id, clean=False)
    assert await client.subscribe(f"{jobs(device)}/#", 1) == 1
    return client


async def test_released_work_is_notified_and_done_over_mqtt(broker: Harness) -> None:
    device = await broker.device("pump")
    client = await notified(broker, device)  # nothing to do: no notice on subscribing
    job_id = await new_job(broker, device)
    got = await client.next_message()
    assert got.topic == f"{jobs(device)}/notify-next" and got.qos == 1
    execution = json.loads(got.payload)["execution"]
    assert execution["job_id"] == job_id and execution["document"] == {"fw": "3"}
    await client.publish(f"{jobs(device)}/{job_id}/get", b'{"client_token": "g"}', 1)
    topic, body = await next_json(client)
    assert topic == f"{jobs(device)}/{job_id}/get/accepted" and body["client_token"] == "g"
    assert body["state"] == "QUEUED" and body["version"] == 1
    update = {"state": "IN_PROGRESS", "progress": 10, "expected_version": 1}
    await client.publish(f"{jobs(device)}/{job_id}/update", json.dumps(update).encode(), 1)
    status, stored = await broker.call("GET", f"/v2/jobs/{job_id}/executions/{device.id}")
    assert stored["execution"]["state"] == "IN_PROGRESS"  # durable before the PUBACK
    topic, body = await next_json(client)
    assert topic == f"{jobs(device)}/{job_id}/update/accepted" and body["version"] == 2
    await client.publish(f"{jobs(device)}/{job_id}/update", json.dumps(update).encode(), 1)
    topic, body = await next_json(client)
    assert topic == f"{jobs(device)}/{job_id}/update/rejected"
    assert body["code"] == 409 and body["version"] == 2  # the current version
    done = {"state": "SUCCEEDED", "expected_version": 2}
    await client.publish(f"{jobs(device)}/{job_id}/update", json.dumps(done).encode(), 1)
    topic, body = await next_json(client)  # no `{}` on notify-next: the answer told it
    assert topic == f"{jobs(device)}/{job_id}/update/accepted" and body["state"] == "SUCCEEDED"
    await client.publish(f"{jobs(device)}/get", b"", 1)
    assert await next_json(client) == (f"{jobs(device)}/get/accepted", {"jobs": []})
    status, reply = await broker.call("GET", f"/v2/jobs/{job_id}")
    assert reply["job"]["state"] == "COMPLETED"


async def test_notices_and_replies_reach_the_devices_own_sessions_only(broker: Harness) -> None:
    """A user tool and another device subscribed to the device's job topics (and to the
    whole root) hear neither the notify-next of a released job nor the answer to the
    device's own request."""
    device = await broker.device("pump")
    client = await notified(broker, device)
    base = jobs(device)
    others = await onlookers(broker, device, f"{base}/#", f"{base}/+")
    job_id = await new_job(broker, device)
    got = await client.next_message()
    assert got.topic == f"{base}/notify-next" and got.qos == 1
    await client.publish(f"{base}/{job_id}/get", b"{}", 1)
    assert (await next_json(client))[0] == f"{base}/{job_id}/get/accepted"
    assert await heard_before_a_marker(client, device.root, others) == []


async def test_a_device_that_ends_its_execution_is_told_only_of_a_next_one(
    broker: Harness,
) -> None:
    """notify-next carries something new or is not sent (#31): a device whose own update
    ended its execution learnt that from the answer, so it is told its next execution
    when one waits, and nothing (no `{}`) when none does."""
    device = await broker.device("pump")
    first = await new_job(broker, device)
    second = await new_job(broker, device)
    client = await notified(broker, device)
    topic, body = await next_json(client)  # on subscribing: the older of the two
    assert topic.endswith("/notify-next") and body["execution"]["job_id"] == first
    for job_id, then in ((first, second), (second, None)):
        done = json.dumps({"state": "SUCCEEDED"}).encode()
        await client.publish(f"{jobs(device)}/{job_id}/update", done, 1)
        told = dict([await next_json(client) for _ in range(1 if then is None else 2)])
        assert told[f"{jobs(device)}/{job_id}/update/accepted"]["state"] == "SUCCEEDED"
        if then is not None:
            assert told[f"{jobs(device)}/notify-next"]["execution"]["job_id"] == then
    await client.publish(f"{jobs(device)}/get", b"", 1)  # nothing came before its answer
    assert await next_json(client) == (f"{jobs(device)}/get/accepted", {"jobs": []})


async def test_a_cancel_tells_the_devices_it_was_released_to_only(broker: Harness) -> None:
    """A job canceled (with force: its execution in progress too) tells `{}` to the device
    whose work it takes back; a device whose execution was never released never heard of
    it, and is told nothing (a cancel of a job over 10,000 devices told them all)."""
    pump, tank = await broker.device("pump"), await broker.device("tank")
    job_id = await new_job(broker, pump, tank, policy={"max_in_progress": 1})
    clients = {d.id: await notified(broker, d, d.id) for d in (pump, tank)}
    states = {}
    for device in (pump, tank):
        status, found = await broker.call("GET", f"/v2/jobs/{job_id}/executions/{device.id}")
        states[device.id] = "released_date" in found["execution"]
    (working,) = [d for d in (pump, tank) if states[d.id]]
    (waiting,) = [d for d in (pump, tank) if not states[d.id]]
    topic, body = await next_json(clients[working.id])  # on subscribing
    assert body["execution"]["job_id"] == job_id
    started = json.dumps({"state": "IN_PROGRESS"}).encode()
    await clients[working.id].publish(f"{jobs(working)}/{job_id}/update", started, 1)
    assert (await next_json(clients[working.id]))[0].endswith("/update/accepted")
    status, _ = await broker.call("POST", f"/v2/jobs/{job_id}/cancel", json={"force": True})
    assert status == 200
    assert await next_json(clients[working.id]) == (
        f"{jobs(working)}/notify-next",
        {"timestamp": ANY},
    )
    await clients[waiting.id].publish(f"{jobs(waiting)}/get", b"", 1)
    assert await next_json(clients[waiting.id]) == (f"{jobs(waiting)}/get/accepted", {"jobs": []})


async def test_the_device_lists_its_pending_jobs(broker: Harness) -> None:
    device = await broker.device("pump")
    job_id = await new_job(broker, device)
    client = await notified(broker, device)
    await next_json(client)  # notify-next, on subscribing
    await client.publish(f"{jobs(device)}/get", b"", 1)
    topic, body = await next_json(client)
    assert topic == f"{jobs(device)}/get/accepted"
    assert [j["job_id"] for j in body["jobs"]] == [job_id]
    await client.publish(f"{jobs(device)}/nope/get", b"", 1)
    topic, body = await next_json(client)
    assert topic == f"{jobs(device)}/nope/get/rejected" and body["code"] == 404


def jobs_reads_on_the_loop(broker: Harness, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The reads the jobs room makes on the event loop's connection from now on, named by
    the function read (the writer's thread does not count: it is off the loop)."""
    db = broker.site.services.db
    made: list[str] = []
    read = db.read

    def counted(fn: Any) -> Any:
        if getattr(fn, "__module__", "").startswith("edge.jobs"):
            made.append(fn.__qualname__)
        return read(fn)

    monkeypatch.setattr(db, "read", counted)
    return made


async def test_a_devices_update_costs_the_loop_no_read(
    broker: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update over MQTT is one write: the device checked, the execution moved, what
    notify-next and the progress hook tell read in that write's transaction, on the
    writer's thread; the event loop only hands the request over and publishes."""
    device = await broker.device("pump")
    job_id = await new_job(broker, device)
    client = await notified(broker, device)
    await next_json(client)  # notify-next, on subscribing
    made = jobs_reads_on_the_loop(broker, monkeypatch)
    for state in ("IN_PROGRESS", "SUCCEEDED"):
        await client.publish(f"{jobs(device)}/{job_id}/update", json.dumps({"state": state}), 1)
        topic, _ = await next_json(client)
        assert topic == f"{jobs(device)}/{job_id}/update/accepted"
    assert made == []


async def test_a_devices_update_reads_its_device_job_execution_and_counts_once(
    broker: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of a device's updates is one write that reads its device, its job and its
    execution once each, moves the execution, and reads the job's counts once after the
    move, for settling the job and for the progress told (on SUCCEEDED they were read
    twice); then the device's next execution, unsorted by SQLite (CPU per execution, #31).
    Of the device, only where it is and whether it is active are read, not the whole
    record with its JSON. The job has another device, so it does not end here (a job
    that ends is read again, as it then is)."""
    device = await broker.device("pump")
    job_id = await new_job(broker, device, await broker.device("other"))
    client = await notified(broker, device)
    await next_json(client)  # notify-next, on subscribing
    monkeypatch.setattr(broker.site.services.job_scheduler, "tick", _no_tick)
    calls = _storage_calls(monkeypatch)
    read = {"placement": 1, "execution": 1, "core": 1, "move": 1, "counts": 1}
    for state, expected in (
        ("IN_PROGRESS", read),
        ("SUCCEEDED", {**read, "next_released": 1}),
    ):
        calls.clear()
        await client.publish(f"{jobs(device)}/{job_id}/update", json.dumps({"state": state}), 1)
        topic, reply = await next_json(client)
        assert topic == f"{jobs(device)}/{job_id}/update/accepted" and reply["state"] == state
        assert calls == expected, state
    status, reply = await broker.call("GET", f"/v2/jobs/{job_id}")
    assert reply["job"]["counts"]["SUCCEEDED"] == 1


def _storage_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every call of a public function of storage/jobs.py and storage/devices.py from now
    on, by name."""
    calls: Counter[str] = Counter()
    for module in (job_store, device_store):
        for name, function in vars(module).items():
            ours = inspect.isfunction(function) and function.__module__ == module.__name__
            if ours and not name.startswith("_"):
                monkeypatch.setattr(module, name, _counted(calls, name, function))
    return calls


async def _no_tick() -> Changes:
    return Changes()


def _counted(reads: Counter[str], name: str, read: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any) -> Any:
        reads[name] += 1
        return read(*args)

    return counted


async def test_a_tick_that_releases_costs_the_loop_no_read(
    broker: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a tick releases is told from what its own transaction read (a release of more
    than a chunk of devices is read after the commit, in chunks, the loop free between)."""
    device = await broker.device("pump")
    client = await notified(broker, device)
    status, reply = await broker.call(
        "POST", "/v2/jobs", json={"document": {}, "targets": {"device_ids": [device.id]}}
    )
    assert status == 201, reply
    made = jobs_reads_on_the_loop(broker, monkeypatch)
    released = await broker.site.services.job_scheduler.tick()
    assert released.devices == {device.id}
    topic, body = await next_json(client)
    assert topic.endswith("/notify-next") and body["execution"]["job_id"] == reply["job"]["id"]
    assert made == []


async def test_a_suspended_devices_requests_are_refused_in_their_transaction(
    broker: Harness,
) -> None:
    """The device is checked active in the read or write that answers (no read of it
    before): suspended, its own executions are not found, over HTTP's service as over
    MQTT's."""
    device = await broker.device("pump")
    job_id = await new_job(broker, device)
    await broker.suspend(device)
    device_jobs = broker.site.services.device_jobs
    for ask in (
        lambda: device_jobs.pending(device.id),
        lambda: device_jobs.get(device.id, job_id),
    ):
        with pytest.raises(NotFound, match="Device not found"):
            ask()
    with pytest.raises(NotFound, match="Device not found"):
        await device_jobs.update(device.id, job_id, {"state": "IN_PROGRESS"})
    status, stored = await broker.call("GET", f"/v2/jobs/{job_id}/executions/{device.id}")
    assert status == 200 and stored["execution"]["version"] == 1  # not moved


async def test_a_device_catches_up_on_subscribing_and_reconnecting(broker: Harness) -> None:
    device = await broker.device("pump")
    job_id = await new_job(broker, device)  # released while the device was away
    client = await notified(broker, device)
    topic, body = await next_json(client)
    assert topic.endswith("/notify-next") and body["execution"]["job_id"] == job_id
    client.stop()
    again = broker.client("d", **device.login, clean=False)
    assert (await again.connect())[0] == 0  # the session holds its subscription
    topic, body = await next_json(again)
    assert topic.endswith("/notify-next") and body["execution"]["job_id"] == job_id


async def test_only_the_device_itself_asks_and_only_the_server_answers(
    broker: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    device = await broker.device("pump")
    job_id = await new_job(broker, device)
    client = await notified(broker, device)
    await next_json(client)
    tool = broker.client("tool", username="admin", password=broker.admin_token)
    assert (await tool.connect())[0] == 0
    other = await broker.connected(await broker.device("other", EVERYTHING), "other")
    forged = b'{"state": "SUCCEEDED"}'
    base = jobs(device)
    asks = ("get", f"{job_id}/get", f"{job_id}/update")
    answers = ("notify-next", f"{job_id}/update/accepted", f"{job_id}/get/rejected")
    with caplog.at_level(logging.WARNING, "edge.mqtt"):
        for sender in (tool, other):
            for rest in (*asks, *answers):
                await sender.publish(f"{base}/{rest}", forged, 1)
        for rest in answers:
            await client.publish(f"{base}/{rest}", forged, 1)  # the device itself
    assert broker.stats.refused_publishes == 15
    assert caplog.text.count("reserved for the device's own sessions") == 6
    assert caplog.text.count("reserved for the server") == 9
    status, reply = await broker.call("GET", f"/v2/jobs/{job_id}/executions/{device.id}")
    assert reply["execution"]["state"] == "QUEUED" and reply["execution"]["version"] == 1
    await client.publish(f"{base}/{job_id}/get", b"{}", 1)
    topic, _ = await next_json(client)  # nothing forged came before the server's answer
    assert topic == f"{base}/{job_id}/get/accepted"
    assert client.messages.empty() and tool.messages.empty()


async def test_a_repeated_subscribe_sends_no_second_notice(broker: Harness) -> None:
    """Thirty SUBSCRIBEs to notify-next in one write bring one notice, not thirty (the
    twins' delta learnt this: #29 F6)."""
    device = await broker.device("pump")
    await new_job(broker, device)
    topic = f"{jobs(device)}/notify-next"
    kinds = await asyncio.to_thread(_subscribe_flood, broker.ports["mqtt"], device.login, topic, 30)
    assert kinds.count(SUBACK) == 30
    assert kinds.count(frames.PUBLISH) == 1, kinds
