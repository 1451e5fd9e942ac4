"""The one place that knows storage, the services, the HTTP layer (and later the broker).

`open_site` prepares a data folder (folders, keys, migrated database, first staff account);
`create_app` builds the aiohttp application on it; `serve` runs it until SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass

from aiohttp import web

from api import auth, middleware, openapi, orgs, routing, system
from api.keys import SERVICES
from api.routing import Route
from edge import clock
from edge.config import Config
from edge.keys import load_or_create
from edge.services import Services
from edge.staff import FirstStaff, ensure_first
from storage import layout, sessions
from storage.database import Database

log = logging.getLogger("edge")
ROUTES: list[Route] = [*system.ROUTES, *auth.ROUTES, *orgs.ROUTES]
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
        middlewares=middleware.chain(),
        client_max_size=services.config.max_body_bytes,
        handler_args={"max_field_size": 16384},
    )
    app[SERVICES] = services
    app[system.OPENAPI] = openapi.build(ROUTES, services.config.base_url)
    routing.register(app, ROUTES)
    app.cleanup_ctx.append(_background)
    app.on_cleanup.append(_close_database)
    return app


async def _background(app: web.Application) -> AsyncIterator[None]:
    task = asyncio.create_task(_sweep(app[SERVICES].db))
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _sweep(db: Database) -> None:
    """Forget sessions whose refresh tokens have expired."""
    while True:
        await db.write(lambda c: sessions.purge_expired(c, clock.now_iso()))
        await asyncio.sleep(SWEEP_SECONDS)


async def _close_database(app: web.Application) -> None:
    app[SERVICES].db.close()


async def serve(site: Site) -> None:
    """Serve until SIGTERM or SIGINT, then finish in-flight requests and close cleanly."""
    config = site.services.config
    app = create_app(site)
    runner = web.AppRunner(app, shutdown_timeout=config.shutdown_timeout, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, config.host, config.port).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    log.info("serving %s", config.base_url)
    await stop.wait()
    log.info("stopping: finishing in-flight requests")
    await runner.cleanup()
    log.info("stopped cleanly")
