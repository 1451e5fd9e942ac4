"""What the soak (bench/soak.py) sets up on the server before its load starts, through the
public interface: an org with an admin, a plain user and groups (bench/world.py), a data
group of ENTRIES entries and a device with an API key for it, the MQTT devices, and a
device tunnel with its two helper programs; and the requests of the HTTP mix.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from bench import soak_load, tunnels, world
from bench.mqtt_load import Login
from bench.soak_load import Request

ENTRIES = 1000
LISTENERS = 4  # MQTT clients that receive what the devices publish, a share each
SCOPES = {"/soak": {"can_publish": True, "can_subscribe": True}}
ctx = mp.get_context("spawn")


@dataclass
class Site:
    base: str
    admin: str
    user: str
    user_id: str
    target_id: str
    groups: list[str]
    data_group: str
    key: str
    root: str = ""
    devices: list[Login] = field(default_factory=list)


async def build(base: str, devices: int) -> Site:
    built = await world.build(base, "soak")
    await world.grow(built, 10)
    admin = built.tokens["admin"]
    async with aiohttp.ClientSession() as session:
        group = await world._created_id(
            session, base, admin, "/v2/groups", {"name": "Soak data"}, "group"
        )
        await world._gather(
            8,
            (
                world._call(
                    session,
                    base,
                    "PUT",
                    f"/v2/groups/{group}/data/e/{i:04d}",
                    admin,
                    {"value": {"seq": i, "celsius": 21.5}},
                )
                for i in range(ENTRIES)
            ),
        )
        key = await _data_device(session, base, admin, group)
        site = Site(
            base,
            admin,
            built.tokens["user"],
            built.user_id,
            built.target_id,
            built.groups,
            group,
            key,
        )
        made = await world._gather(
            8,
            (
                world._call(
                    session,
                    base,
                    "POST",
                    "/v2/devices",
                    admin,
                    {"name": f"soak-{i}", "iot_scopes": SCOPES},
                )
                for i in range(devices + LISTENERS)
            ),
        )
    site.root = made[0]["device"]["root_scope"]
    site.devices = [
        Login(d["device"]["id"], d["device"]["id"], d["device"]["api_key"]) for d in made
    ]
    return site


async def _data_device(session: aiohttp.ClientSession, base: str, admin: str, group: str) -> str:
    made = await world._call(session, base, "POST", "/v2/devices", admin, {"name": "soak-data"})
    every = {"can_read": True, "can_write": True, "can_update": True, "can_delete": True}
    grant = {"data_paths": {"/": every}}
    device = made["device"]
    await world._call(
        session, base, "POST", f"/v2/groups/{group}/access/{device['id']}", admin, grant
    )
    return str(device["api_key"])


def http_mix(site: Site) -> list[Request]:
    data = f"/v2/groups/{site.data_group}/data/e/%04d"
    body = json.dumps({"value": {"celsius": 22.5, "status": "ok"}, "unicode_1": "soak"})
    return [
        Request(40, "GET", data, site.key, spread=ENTRIES),
        Request(10, "PUT", data, site.key, body, spread=ENTRIES),
        Request(15, "GET", f"/v2/groups/{site.groups[0]}", site.admin),
        Request(10, "GET", f"/v2/groups/{site.groups[1]}", site.user),
        Request(10, "GET", f"/v2/users/{site.target_id}", site.admin),
        Request(10, "GET", "/v2/groups?limit=10", site.user),
        Request(5, "PUT", data, site.admin, body, spread=ENTRIES),
    ]


def sign_in(site: Site) -> list[Request]:
    form = (
        f"grant_type=password&username=user%40soak.test&password={world.MEMBER_PASSWORD}"
        "&client_id=soak"
    )
    return [Request(1, "POST", "/v2/auth/token", "", form, form=True)]


class Tunnel:
    """A device's agent (with a sink and an echo behind it) and a technician's connectors."""

    def __init__(self) -> None:
        self.helpers: list[tunnels.Helper] = []
        self.servers: list[asyncio.Server] = []
        self.ports: dict[str, int] = {}

    @classmethod
    async def open(cls, site: Site, mqtt_port: int, seconds: float) -> Tunnel:
        self = cls()
        for name, handler in (("SINK", tunnels.sink), ("ECHO", tunnels.echo)):
            self.servers.append(await asyncio.start_server(handler, "127.0.0.1", 0))
            self.ports[name] = self.servers[-1].sockets[0].getsockname()[1]
        made = await tunnels.device(site.base, site.admin)
        agent, _ = await tunnels.Helper.start(
            "agent",
            "--server",
            site.base,
            "--device-id",
            made["id"],
            "--root-scope",
            made["root_scope"],
            "--mqtt",
            f"mqtt://127.0.0.1:{mqtt_port}",
            *(f"--service={name}={port}" for name, port in self.ports.items()),
            env={"EDGE_DEVICE_API_KEY": made["api_key"]},
            wait_for="waiting on",
        )
        self.helpers.append(agent)
        minutes = min(720, int(seconds // 60) + 10)
        body = {"services": list(self.ports), "timeout": minutes}
        async with aiohttp.ClientSession() as session:
            path = f"/v2/devices/{made['id']}/tunnels"
            opened = (await world._call(session, site.base, "POST", path, site.admin, body))[
                "tunnel"
            ]
        for name in list(self.ports):
            helper, line = await tunnels.Helper.start(
                "connect",
                "--server",
                site.base,
                "--tunnel",
                opened["uuid"],
                "--service",
                name,
                "--listen",
                "127.0.0.1:0",
                env={"EDGE_TUNNEL_TOKEN": opened["client_access_token"]},
                wait_for=" on ",
            )
            self.helpers.append(helper)
            self.ports[name] = int(line.rsplit(":", 1)[1])
        return self

    async def close(self) -> None:
        for helper in self.helpers:
            await helper.stop()
        for server in self.servers:
            server.close()


class Devices:
    """The MQTT devices' processes and the listener's, with their shared counters."""

    def __init__(self, port: int, site: Site, count: int, rate: float) -> None:
        first = LISTENERS  # site.devices[:LISTENERS] listen, the rest publish
        groups = [list(range(first, first + count))[i::2] for i in range(2)]
        self.counts = ctx.RawArray("q", soak_load.SLOTS * (len(groups) + 1))
        self.ready, self.stop, self.stop_listener = ctx.Semaphore(0), ctx.Event(), ctx.Event()
        shares = [f"{site.root}/soak/s{k}/#" for k in range(LISTENERS)]
        listen = (port, site.devices[:LISTENERS], shares, self.counts, 0)
        self.procs = [
            ctx.Process(target=soak_load.listener, args=(*listen, self.ready, self.stop_listener))
        ]
        for slot, members in enumerate(groups, 1):
            logins = [site.devices[i] for i in members]
            topics = [f"{site.root}/soak/s{i % LISTENERS}/d{i}" for i in members]
            self.procs.append(
                ctx.Process(
                    target=soak_load.devices,
                    args=(port, logins, topics, rate, self.counts, slot, self.ready, self.stop),
                )
            )

    def start(self) -> None:
        for proc in self.procs:
            proc.start()
        for _ in self.procs:
            if not self.ready.acquire(timeout=120):
                raise RuntimeError("the MQTT devices did not connect")

    def totals(self) -> tuple[int, int, int]:
        """(acknowledged publishes, deliveries to the listener, failures and drops)."""
        n = soak_load.SLOTS
        rows = [list(self.counts[i * n : (i + 1) * n]) for i in range(len(self.procs))]
        acked = sum(r[soak_load.ACKED] for r in rows[1:])
        bad = sum(r[soak_load.FAILED] + r[soak_load.DROPPED] for r in rows)
        return acked, rows[0][soak_load.ACKED], bad

    def cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.procs if p.pid and p.is_alive())

    def finish(self) -> int:
        """Stop publishing, let the last messages arrive; the number lost."""
        self.stop.set()
        for proc in self.procs[1:]:
            proc.join(30)
        deadline = time.monotonic() + 30  # a starved listener catches up
        while time.monotonic() < deadline:
            acked, received, _ = self.totals()
            if received >= acked:
                break
            time.sleep(0.1)
        self.stop_listener.set()
        self.procs[0].join(10)
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        acked, received, _ = self.totals()
        return max(0, acked - received)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
