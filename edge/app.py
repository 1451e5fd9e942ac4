"""The one place that knows storage, the services, the HTTP layer and the MQTT broker.

`open_site` prepares a data folder (folders, keys, migrated database, first staff account);
`create_app` builds the aiohttp application on it, with the broker started and stopped as
part of it; `serve` runs it until SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from api import (
    account,
    audit,
    auth,
    billing,
    bundles,
    certificates,
    commands,
    connections,
    console,
    data,
    devices,
    email_templates,
    entry,
    est,
    events,
    files,
    groups,
    jobs,
    metrics,
    mfa,
    middleware,
    my_org,
    openapi,
    orgs,
    passwords,
    project_access,
    projects,
    provisioning,
    pulse,
    roles,
    routing,
    summary,
    system,
    trash,
    tunnels,
    twins,
    ui,
    user_mfa,
    users,
)
from api.keys import REQUEST_ID, SERVICES
from api.routing import Route
from edge.auth.keys import load_or_create
from edge.auth.staff import FirstStaff, ensure_first
from edge.commands.inbox import CommandInbox
from edge.jobs.inbox import JobInbox
from edge.kernel import clock, storage_errors
from edge.kernel.config import Config
from edge.ops import listening, memory, site_keys, tls
from edge.ops import metrics as site_metrics
from edge.ops.health import Health, Probe
from edge.pulse.shared import Shared
from edge.services import Services
from edge.twins.inbox import TwinInbox
from embedded_broker import listeners
from embedded_broker.service import MqttService
from storage import challenges, layout, sessions, throttle
from storage import trash as trash_store
from storage.database import Database, SearchBudget
from storage.mqtt_retained import RetainedMessages
from storage.mqtt_sessions import MqttSessions
from storage.rows import Tx
from storage.space import DiskFull, NotWritable

log = logging.getLogger("edge")
ROUTES: list[Route] = [
    *entry.ROUTES,
    *system.ROUTES,
    *auth.ROUTES,
    *mfa.ROUTES,
    *user_mfa.ROUTES,
    *passwords.ROUTES,
    *orgs.ROUTES,
    *billing.ROUTES,
    *projects.ROUTES,
    *project_access.ROUTES,
    *ui.ROUTES,
    *groups.ROUTES,
    *data.ROUTES,
    *roles.ROUTES,
    *users.ROUTES,
    *devices.ROUTES,
    *tunnels.ROUTES,
    *commands.ROUTES,
    *twins.ROUTES,
    *jobs.ROUTES,
    *certificates.ROUTES,
    *bundles.ROUTES,
    *est.ROUTES,
    *events.ROUTES,
    *account.ROUTES,
    *my_org.ROUTES,
    *email_templates.ROUTES,
    *provisioning.ROUTES,
    *trash.ROUTES,
    *files.ROUTES,
    *audit.ROUTES,
    *metrics.ROUTES,
    *summary.ROUTES,
    *pulse.ROUTES,
    *console.ROUTES,
]
SWEEP_SECONDS = 3600
MQTT = web.AppKey("mqtt", MqttService)
PROBE = web.AppKey("probe", Probe)


@dataclass
class Site:
    services: Services
    first_staff: FirstStaff | None


def open_site(config: Config) -> Site:
    layout.prepare(config.data_dir)
    site_keys.require(config.data_dir)  # keys are made only where no data depends on them
    keys = load_or_create(config.data_dir)
    path = layout.database_path(config.data_dir)
    budget = SearchBudget(config.search_max_steps, config.search_max_seconds)
    db = Database.open(path, storage_errors.translated, budget)
    try:
        first = ensure_first(db, config)
    except BaseException:
        db.close()
        raise
    services = Services.build(config, db, keys)
    services.mqtt_directory = services.device_directory  # who may use the MQTT broker
    return Site(services, first)


def create_app(site: Site) -> web.Application:
    services = site.services
    app = web.Application(
        middlewares=middleware.chain(_alert_operator),
        client_max_size=services.config.max_body_bytes,
        handler_args={
            "max_field_size": 16384,
            # A request line long enough for a data or file path of 1,024 characters
            # of any script, percent-encoded (up to 12 bytes in the URL per character).
            "max_line_size": 16384,
            "keepalive_timeout": services.config.keepalive_timeout,
        },
    )
    app[SERVICES] = services
    app[system.HEALTH] = Health()
    app[system.OPENAPI] = openapi.build(ROUTES, _server_url(services.config))
    routing.register(app, ROUTES)
    app.on_response_prepare.append(middleware.frame)
    app.on_response_prepare.append(console.frame)  # the console's policy, on all its answers
    app[MQTT] = _broker(services)
    services.tunnels.notify = app[MQTT].notify_device  # tunnel notices go to devices
    _commands(services, app[MQTT])
    services.twins.notify = app[MQTT].notify_device  # and twin replies and deltas
    app[MQTT].add_inbox(TwinInbox(services.twins))  # twin requests come from them
    _jobs(services, app[MQTT])
    services.live.publish_over_mqtt(app[MQTT].publish_where)  # data changes to readers
    app[PROBE] = Probe(services.db, app[system.HEALTH], app[MQTT].state)
    published = Shared(app[MQTT].published)  # MQTT messages by org, for billing and pulse
    services.meter.source = published.reader("billing")
    services.pulse_sampler.counters.mqtt = published.reader("pulse")
    if services.config.metrics:
        _metrics(app)
    app.cleanup_ctx.append(_background)
    app.cleanup_ctx.append(_mqtt)  # started after, stopped before the background tasks
    app.on_shutdown.append(_drop_tunnels)
    app.on_shutdown.append(_end_streams)
    app.on_cleanup.append(_close_database)
    return app


def _metrics(app: web.Application) -> None:
    """GET /metrics: this application's own registry, read at scrape time."""
    services, broker = app[SERVICES], app[MQTT]

    def broker_figures() -> site_metrics.Broker | None:
        if broker.state() is None:  # every MQTT listener is off
            return None
        return site_metrics.Broker(*broker.figures())

    requests = app[metrics.REQUESTS] = site_metrics.RequestStats()
    app[metrics.REGISTRY] = site_metrics.registry(
        site_metrics.Sources(
            services.db,
            requests,
            services.signin.throttle.counts,
            lambda: site_metrics.Tunnels(*services.tunnels.hub.figures()),
            broker_figures,
            services.devices.presence,
            services.commands.counts,
            services.site_ca.cert.not_valid_after_utc,
        )
    )


def _broker(services: Services) -> MqttService:
    assert services.mqtt_directory is not None, "open_site sets the MQTT client directory"
    store = RetainedMessages(services.db, clock.now_iso)
    sessions = MqttSessions(services.db)
    presence = services.devices.presence  # told of devices' connections
    return MqttService(services.config, services.mqtt_directory, store, sessions, presence)


def _commands(services: Services, broker: MqttService) -> None:
    """Commands go to devices through the broker, and their replies come back from it."""
    commands = services.commands
    commands.notify = broker.notify_spare
    commands.notify_connected = broker.notify_connected
    commands.persistent = broker.keeps_session
    inbox = CommandInbox(commands)
    broker.add_inbox(inbox)
    broker.add_room_waiter(inbox)  # what a full session refused goes out as it empties


def _jobs(services: Services, broker: MqttService) -> None:
    """Jobs tell devices their next execution through the broker, and devices get and
    update their executions through it."""
    notices = services.jobs.notices
    notices.notify = broker.notify_device
    broker.add_inbox(JobInbox(services.device_jobs, notices))


async def _mqtt(app: web.Application) -> AsyncIterator[None]:
    """The MQTT broker, on this event loop (docs/mqtt.md, "The process model"); nobody is
    online before they connect to it (docs/presence.md)."""
    await app[SERVICES].devices.presence.reset()
    await app[MQTT].start()
    await app[PROBE].once()  # health shows the broker from the first request
    yield
    await app[MQTT].stop()


def mqtt_urls(config: Config) -> list[tuple[str, str]]:
    """The broker's listeners for the startup banner."""
    return listeners.urls(config)


def _server_url(config: Config) -> str:
    """The OpenAPI server: the public URL, else "/" (relative to wherever the client reached us).

    The bind address is no use to a browser on another machine of the LAN.
    """
    return config.base_url if config.public_url else "/"


async def _background(app: web.Application) -> AsyncIterator[None]:
    """Background tasks are asked to stop, not cancelled: a write they await finishes first.

    The health probe runs once before the first request, so health is known from the start;
    and the files left by an interrupted run are put right (nothing is in flight yet, so
    every unindexed blob is an orphan).
    """
    await app[SERVICES].file_sweeps.recover()
    await app[SERVICES].live.begin()  # this run's event IDs, above every earlier run's
    stop = asyncio.Event()
    probe = app[PROBE]
    await probe.once()
    tasks = [
        asyncio.create_task(_sweep(app[SERVICES], stop)),
        asyncio.create_task(app[SERVICES].outbox_worker.run(stop)),
        asyncio.create_task(probe.run(stop)),
        asyncio.create_task(app[SERVICES].last_seen.run(stop)),
        asyncio.create_task(app[SERVICES].data_eraser.run(stop)),
        asyncio.create_task(app[SERVICES].file_sweeps.run(stop)),
        asyncio.create_task(app[SERVICES].tunnels.hub.run(stop)),
        asyncio.create_task(app[SERVICES].meter.run(stop)),
        asyncio.create_task(app[SERVICES].pulse_sampler.run(stop)),
        asyncio.create_task(app[SERVICES].job_scheduler.run(stop)),
    ]
    yield
    stop.set()
    await asyncio.gather(*tasks)


async def _sweep(services: Services, stop: asyncio.Event) -> None:
    """Hourly, until asked to stop: forget sessions whose refresh tokens have expired,
    expired challenge sessions, sign-in failure counts idle for a day, deleted records
    whose time in the trash is over, and audit events, ended commands and ended jobs past
    their retention. A sweep the disk refuses (or any failed one) is logged and the next
    hour's runs: the loop ending would stop every later sweep, and raise again when the
    server stops."""
    while not stop.is_set():
        try:
            await sweep_once(services)
        except (DiskFull, NotWritable) as exc:  # a line, not a traceback; the next hour retries
            log.warning("hourly sweep waits: the disk refuses writes (%s)", exc)
        except Exception:  # a failed sweep must never end the hourly ones
            log.exception("hourly sweep failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), SWEEP_SECONDS)


async def sweep_once(services: Services) -> None:
    def purge(conn: Tx) -> None:
        _purge(conn)
        services.audit.prune(conn)

    await services.db.write(purge)
    await services.commands.sweep()
    await services.job_retention.sweep()


def _purge(conn: Tx) -> None:
    now = clock.now_iso()
    sessions.purge_expired(conn, now)
    challenges.purge_expired(conn, now)
    throttle.purge_before(conn, now)
    trash_store.purge_expired(conn, now)


def _alert_operator(request: web.Request, status: int, message: str) -> None:
    route = request.match_info.route.resource
    pattern = route.canonical if route is not None else request.path
    request_id = request.get(REQUEST_ID, "-")
    request.app[SERVICES].alerts.report(status, request.method, pattern, request_id)


async def _drop_tunnels(app: web.Application) -> None:
    """Before in-flight requests are waited for: a tunnel's WebSockets would never end."""
    await app[SERVICES].tunnels.hub.drop_all("the server is stopping")


async def _end_streams(app: web.Application) -> None:
    """Open event streams end, so their handlers return before the server stops."""
    app[SERVICES].live.streams.end_all()


async def _close_database(app: web.Application) -> None:
    await app[SERVICES].alerts.drain()
    app[SERVICES].blobs.close()
    app[SERVICES].db.close()


@dataclass
class Sockets:
    """Every listener of `edge serve`, bound: HTTP, and each MQTT listener by its name."""

    http: socket.socket
    mqtt: dict[str, socket.socket]

    def close(self) -> None:
        for sock in (self.http, *self.mqtt.values()):
            sock.close()


def bind(config: Config) -> Sockets:
    """Bind every listener before anything else happens (edge/ops/listening.py): a port
    that cannot be had fails the start before the data folder is touched."""
    sockets = Sockets(listening.listen(config.host, config.port, "port"), {})
    try:
        for listener in listeners.enabled(config):
            sock = listening.listen(config.host, listener.port, listener.setting)
            sockets.mqtt[listener.name] = sock
    except BaseException:
        sockets.close()
        raise
    return sockets


async def start(site: Site, sockets: Sockets) -> web.AppRunner:
    """Serve the site on bound sockets, with the connection guards of api/connections.py;
    the caller stops it with `runner.cleanup()` (which also closes the database)."""
    config = site.services.config
    app = create_app(site)
    app[MQTT].sockets = sockets.mqtt
    runner = web.AppRunner(app, shutdown_timeout=config.shutdown_timeout, access_log=None)
    try:
        await runner.setup()  # starts the broker on its sockets too
        limits = connections.Limits(config.header_timeout, config.max_connections_per_address)
        await connections.GuardedSite(
            runner, sockets.http, limits, ssl_context=tls.server_context(config)
        ).start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner


async def serve(
    site: Site, sockets: Sockets | None = None, ready: Callable[[], None] | None = None
) -> None:
    """Serve until SIGTERM or SIGINT, then finish in-flight requests and close cleanly.

    `sockets` are the bound listeners (`bind`; bound here when not given). `ready` runs once
    the server listens, so nothing claims to listen before it does. The runner is cleaned
    up (and the database closed) even when serving fails to start.
    """
    stop = _stop_on_signals()
    for mismatch in tls.mismatches(site.services.config):
        log.warning("%s", mismatch)
    _report_memory_on_signal(site.services.config.data_dir)
    try:
        runner = await start(site, sockets if sockets is not None else bind(site.services.config))
    except BaseException:
        site.services.db.close()
        raise
    try:
        if ready is not None:
            ready()
        log.info("serving %s", site.services.config.local_url)
        await stop.wait()
        runner.app[system.HEALTH].stopping = True  # readiness answers 503 from now on
        log.info("stopping: finishing in-flight requests")
    finally:
        await runner.cleanup()
    log.info("stopped cleanly")


def _stop_on_signals() -> asyncio.Event:
    """An event set by SIGTERM or SIGINT: both mean a clean stop, so both exit with code 0."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


def _report_memory_on_signal(data_dir: Path) -> None:
    """SIGUSR2 writes a memory report (edge/ops/memory.py) into the data folder."""
    reports = memory.MemoryReports(data_dir)
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR2, reports.start)
