"""The one place that knows storage, the services, the HTTP layer (and later the broker).

`open_site` prepares a data folder (folders, keys, migrated database, first staff account);
`create_app` builds the aiohttp application on it; `serve` runs it until SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from aiohttp import web

from api import (
    account,
    auth,
    email_templates,
    files,
    groups,
    mfa,
    middleware,
    my_org,
    openapi,
    orgs,
    passwords,
    project_access,
    projects,
    roles,
    routing,
    system,
    trash,
    ui,
    user_mfa,
    users,
)
from api.keys import REQUEST_ID, SERVICES
from api.routing import Route
from edge import clock
from edge.auth.keys import load_or_create
from edge.auth.staff import FirstStaff, ensure_first
from edge.config import Config
from edge.ops import tls
from edge.services import Services
from storage import challenges, layout, sessions, throttle
from storage import trash as trash_store
from storage.database import Database
from storage.rows import Tx

log = logging.getLogger("edge")
ROUTES: list[Route] = [
    *system.ROUTES,
    *auth.ROUTES,
    *mfa.ROUTES,
    *user_mfa.ROUTES,
    *passwords.ROUTES,
    *orgs.ROUTES,
    *projects.ROUTES,
    *project_access.ROUTES,
    *ui.ROUTES,
    *groups.ROUTES,
    *roles.ROUTES,
    *users.ROUTES,
    *account.ROUTES,
    *my_org.ROUTES,
    *email_templates.ROUTES,
    *trash.ROUTES,
    *files.ROUTES,
]
SWEEP_SECONDS = 3600


@dataclass
class Site:
    services: Services
    first_staff: FirstStaff | None


def open_site(config: Config) -> Site:
    layout.prepare(config.data_dir)
    keys = load_or_create(config.data_dir)
    db = Database.open(layout.database_path(config.data_dir))
    try:
        first = ensure_first(db, config)
    except BaseException:
        db.close()
        raise
    return Site(Services.build(config, db, keys), first)


def create_app(site: Site) -> web.Application:
    services = site.services
    app = web.Application(
        middlewares=middleware.chain(_alert_operator),
        client_max_size=services.config.max_body_bytes,
        handler_args={"max_field_size": 16384},
    )
    app[SERVICES] = services
    app[system.OPENAPI] = openapi.build(ROUTES, _server_url(services.config))
    routing.register(app, ROUTES)
    app.cleanup_ctx.append(_background)
    app.on_cleanup.append(_close_database)
    return app


def _server_url(config: Config) -> str:
    """The OpenAPI server: the public URL, else "/" (relative to wherever the client reached us).

    The bind address is no use to a browser on another machine of the LAN.
    """
    return config.base_url if config.public_url else "/"


async def _background(app: web.Application) -> AsyncIterator[None]:
    """Background tasks are asked to stop, not cancelled: a write they await finishes first.

    Before the first request: the files left by an interrupted run are put right (nothing
    is in flight yet, so every unindexed blob is an orphan)."""
    await app[SERVICES].file_sweeps.recover()
    stop = asyncio.Event()
    tasks = [
        asyncio.create_task(_sweep(app[SERVICES].db, stop)),
        asyncio.create_task(app[SERVICES].outbox_worker.run(stop)),
        asyncio.create_task(app[SERVICES].file_sweeps.run(stop)),
    ]
    yield
    stop.set()
    await asyncio.gather(*tasks)


async def _sweep(db: Database, stop: asyncio.Event) -> None:
    """Hourly, until asked to stop: forget sessions whose refresh tokens have expired,
    expired challenge sessions, sign-in failure counts idle for a day, and deleted
    records whose time in the trash is over."""
    while not stop.is_set():
        await db.write(_purge)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), SWEEP_SECONDS)


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


async def _close_database(app: web.Application) -> None:
    await app[SERVICES].alerts.drain()
    app[SERVICES].blobs.close()
    app[SERVICES].db.close()


async def serve(site: Site, ready: Callable[[], None] | None = None) -> None:
    """Serve until SIGTERM or SIGINT, then finish in-flight requests and close cleanly.

    `ready` runs once the port is bound, so nothing claims to listen before it does. The
    runner is cleaned up (and the database closed) even when binding fails.
    """
    config = site.services.config
    stop = _stop_on_signals()
    runner = web.AppRunner(
        create_app(site), shutdown_timeout=config.shutdown_timeout, access_log=None
    )
    await runner.setup()
    try:
        await web.TCPSite(
            runner, config.host, config.port, ssl_context=tls.server_context(config)
        ).start()
        if ready is not None:
            ready()
        log.info("serving %s", config.base_url)
        await stop.wait()
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
