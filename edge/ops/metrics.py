"""What `GET /metrics` tells a Prometheus scraper (docs/operating.md, "Metrics").

Two kinds of figure:
- requests: counted per (method, route template, status) by `RequestStats.observe`, a
  dictionary lookup, a bisect and three additions on the event loop (no lock, no label
  lookup of a client-library metric), so serving pays almost nothing for them;
- everything else is read when a scraper asks (`SiteCollector`), from state that exists
  anyway: the writer's queue and commit times, file sizes, the sign-in throttle's
  counters, the outbox, the broker's counters, the tunnel relay, presence and commands,
  device certificates ending soon and the site CA's end.

prometheus_client renders the text; each application has a registry of its own
(`registry`), so several applications in one process never share a series.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from edge.certificates import expiry
from edge.kernel import clock
from storage import device_certificates as certificates
from storage import files, outbox
from storage.database import Database
from storage.latency import Latency

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"  # the route label of a request no route matched (never its path)
LABELS = ("method", "route", "status")


class RequestStats:
    """Requests by (method, route template, status): a latency histogram each."""

    def __init__(self) -> None:
        self.series: dict[tuple[str, str, int], Latency] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method if method in METHODS else "OTHER", route, status)
        found = self.series.get(key)
        if found is None:
            found = self.series[key] = Latency()
        found.observe(seconds)


@dataclass
class Broker:
    """The MQTT broker's figures, as `edge/app.py` reads them from it."""

    connections: int
    counters: dict[str, int]  # connects, refused_connects, received, sent, dropped_*, ...


@dataclass
class Tunnels:
    """The tunnel relay's figures, as `edge/app.py` reads them from it."""

    connected: int  # tunnels whose device end is connected
    streams: int


class PresenceFigures(Protocol):
    """What the devices room's presence tells (edge/devices/presence.py), by shape: ops
    stands below devices in the house (docs/architecture.md)."""

    @property
    def connects(self) -> int: ...

    @property
    def disconnects(self) -> Mapping[str, int]: ...

    def online_count(self) -> int: ...


@dataclass
class Sources:
    db: Database
    requests: RequestStats
    sign_in: Counter[str]  # the throttle's: failed:<factor>, refused, locked:<scope>
    tunnels: Callable[[], Tunnels]
    broker: Callable[[], Broker | None] = field(default=lambda: None)
    presence: PresenceFigures | None = None
    commands: Mapping[str, int] = field(default_factory=dict)  # sent, answered, ...
    site_ca_not_after: dt.datetime | None = None


class SiteCollector(Collector):
    def __init__(self, sources: Sources) -> None:
        self._s = sources

    def collect(self) -> Iterator[Metric]:
        yield from self._requests()
        yield from self._sign_in()
        yield from self._database()
        yield from self._files_and_outbox()
        yield from self._broker()
        yield from self._tunnels()
        yield from self._devices()
        yield from self._certificates()

    def _requests(self) -> Iterator[Metric]:
        count = CounterMetricFamily(
            "edge_http_requests", "HTTP requests answered, by route template", labels=LABELS
        )
        latency = HistogramMetricFamily(
            "edge_http_request_duration_seconds",
            "Time from the request's arrival to its answer, by route template",
            labels=LABELS,
        )
        for (method, route, status), series in list(self._s.requests.series.items()):
            labels = [method, route, str(status)]
            buckets = series.cumulative()
            count.add_metric(labels, buckets[-1][1])
            latency.add_metric(labels, buckets, series.total)
        yield count
        yield latency

    def _sign_in(self) -> Iterator[Metric]:
        counts = dict(self._s.sign_in)
        failed = CounterMetricFamily(
            "edge_sign_in_failures", "Wrong passwords and MFA codes", labels=["factor"]
        )
        for factor in ("password", "mfa"):
            failed.add_metric([factor], counts.get(f"failed:{factor}", 0))
        yield failed
        yield CounterMetricFamily(
            "edge_sign_in_throttled",
            "Sign-in attempts refused (429) while a block was in force",
            value=counts.get("refused", 0),
        )
        locked = CounterMetricFamily(
            "edge_sign_in_lockouts",
            "Blocks that reached a lockout: of an account from one address (pair), "
            "of an account from everywhere (account), of an address (address)",
            labels=["scope"],
        )
        for scope, name in (("pair", "pair"), ("acct", "account"), ("addr", "address")):
            locked.add_metric([name], counts.get(f"locked:{scope}", 0))
        yield locked

    def _database(self) -> Iterator[Metric]:
        writer = self._s.db.writer
        yield GaugeMetricFamily(
            "edge_db_writer_queue_depth", "Writes waiting for the writer", value=writer.queue_depth
        )
        commits = writer.commits.cumulative()
        yield HistogramMetricFamily(
            "edge_db_commit_duration_seconds",
            "Time of each write transaction (a batch of writes), BEGIN to durable COMMIT",
            buckets=commits,
            sum_value=writer.commits.total,
        )
        size = GaugeMetricFamily(
            "edge_db_size_bytes", "Bytes of the database and its write-ahead log", labels=["file"]
        )
        for name, value in self._s.db.sizes().items():
            size.add_metric([name], value)
        yield size

    def _files_and_outbox(self) -> Iterator[Metric]:
        held = self._s.db.read(lambda c: files.usage(c, files.TOTAL))
        yield GaugeMetricFamily(
            "edge_blob_store_bytes", "Bytes of the files the blob store holds", value=held
        )
        backlog = self._s.db.read(outbox.backlog)
        waiting = GaugeMetricFamily(
            "edge_outbox_messages",
            "Mail and SMS not delivered: pending (to be tried) and failed (given up)",
            labels=["status"],
        )
        for status, count in backlog.items():
            waiting.add_metric([status], count)
        yield waiting

    def _broker(self) -> Iterator[Metric]:
        figures = self._s.broker()
        if figures is None:
            return
        counters = figures.counters
        yield GaugeMetricFamily(
            "edge_mqtt_connections", "Open MQTT connections", value=figures.connections
        )
        for name, text in (
            ("connects", "MQTT connections accepted"),
            ("refused_connects", "MQTT connections refused (credentials, limits)"),
            ("received", "MQTT messages published by clients"),
            ("sent", "MQTT messages sent to subscribers"),
        ):
            yield CounterMetricFamily(f"edge_mqtt_{name}", text, value=counters.get(name, 0))
        dropped = CounterMetricFamily(
            "edge_mqtt_dropped",
            "MQTT messages dropped: QoS 0 past a slow client's queue, or past an offline "
            "session's queue; refused publishes (topic rights)",
            labels=["reason"],
        )
        for reason in ("dropped_qos0", "dropped_offline", "refused_publishes"):
            dropped.add_metric([reason.removeprefix("dropped_")], counters.get(reason, 0))
        yield dropped
        accounts = CounterMetricFamily(
            "edge_mqtt_account_refusals",
            "MQTT refusals at a per-account limit: a persistent session past "
            "mqtt_account_sessions, a connection past mqtt_account_connections, a message "
            "past mqtt_account_queue_bytes, a retained message past "
            "mqtt_account_retained_bytes",
            labels=["limit"],
        )
        for limit in ("sessions", "connections", "queue", "retained"):
            accounts.add_metric([limit], counters.get(f"account_{limit}_refusals", 0))
        yield accounts
        yield CounterMetricFamily(
            "edge_mqtt_address_refusals",
            "MQTT connections closed at once: their address held mqtt_max_connections_per_address",
            value=counters.get("address_refusals", 0),
        )

    def _tunnels(self) -> Iterator[Metric]:
        figures = self._s.tunnels()
        yield GaugeMetricFamily(
            "edge_tunnels_connected",
            "Device tunnels whose device end is connected",
            value=figures.connected,
        )
        yield GaugeMetricFamily("edge_tunnel_streams", "Open tunnel streams", value=figures.streams)

    def _devices(self) -> Iterator[Metric]:
        """Presence (docs/presence.md) and commands (docs/commands.md)."""
        presence = self._s.presence
        if presence is not None:
            yield GaugeMetricFamily(
                "edge_devices_online", "Devices online now", value=presence.online_count()
            )
            yield CounterMetricFamily(
                "edge_device_connects",
                "Connections of devices opened (MQTT sessions and tunnel agents)",
                value=presence.connects,
            )
            closed = CounterMetricFamily(
                "edge_device_disconnects",
                "Connections of devices closed, by reason",
                labels=["reason"],
            )
            for reason, count in presence.disconnects.items():
                closed.add_metric([reason], count)
            yield closed
        commands = CounterMetricFamily(
            "edge_device_commands",
            "Commands sent to devices, answered, timed out; replies refused as invalid",
            labels=["outcome"],
        )
        for outcome, count in self._s.commands.items():
            commands.add_metric([outcome], count)
        yield commands

    def _certificates(self) -> Iterator[Metric]:
        """Device certificates in force that end within 30 days, and the CA's own end
        (docs/provisioning.md)."""
        now, until = expiry.window()
        count = self._s.db.read(lambda c: certificates.count_expiring(c, now, until))
        yield GaugeMetricFamily(
            "edge_device_certificates_expiring",
            "Device certificates in force that end within 30 days",
            value=count,
        )
        if self._s.site_ca_not_after is not None:
            left = (self._s.site_ca_not_after - clock.now()).total_seconds()
            yield GaugeMetricFamily(
                "edge_site_ca_expiry_seconds", "Seconds until the site CA ends", value=left
            )


def registry(sources: Sources) -> CollectorRegistry:
    """This application's own registry: the site's figures and the process's (CPU,
    memory, open files; read from /proc at scrape time)."""
    from prometheus_client import ProcessCollector

    made = CollectorRegistry(auto_describe=False)
    made.register(SiteCollector(sources))
    ProcessCollector(registry=made)
    return made
