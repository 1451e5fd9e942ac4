"""Prometheus metrics (docs/operating.md, "Metrics").

Routes:
- GET /metrics   the Prometheus text format; a staff access token or the configured
                 `metrics_token` as bearer (401 without a token, 403 for anyone else);
                 404 when `metrics = false`.

At the root, where Prometheus looks by default, not under /v2: it is the site's, not
part of the interface. The guard is the handler's own because the metrics token is no
kind of token the interface knows (edge/auth/bearer.py).
"""

from __future__ import annotations

import hmac

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import CollectorRegistry

from api.keys import SERVICES
from api.responses import NO_STORE
from api.routing import Route, bearer_token
from edge.auth import bearer
from edge.kernel.errors import Denied, NotFound, Unauthenticated
from edge.ops.metrics import RequestStats

REGISTRY = web.AppKey("metrics_registry", CollectorRegistry)
REQUESTS = web.AppKey("request_stats", RequestStats)
STAFF_ONLY = "Only staff or the metrics token may read the metrics"


async def metrics(request: web.Request) -> web.Response:
    if REGISTRY not in request.app:
        raise NotFound(f"Not found: {request.method} {request.path}")
    _authorize(request)
    body = generate_latest(request.app[REGISTRY])
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST, **NO_STORE})


def _authorize(request: web.Request) -> None:
    services = request.app[SERVICES]
    token = bearer_token(request)
    if token is None:
        raise Unauthenticated(bearer.REQUIRED)
    configured = services.config.metrics_token
    if configured is not None and hmac.compare_digest(token.encode(), configured.reveal().encode()):
        return
    if bearer.is_api_key(token):
        services.device_keys.verify(token)  # an unknown key is a 401, a device's a 403
        raise Denied(STAFF_ONLY)
    if not services.tokens.verify(token).is_staff:
        raise Denied(STAFF_ONLY)


ROUTES = [
    Route(
        "GET",
        "/metrics",
        metrics,
        "public",
        "Prometheus metrics (staff token or metrics_token as bearer)",
        "system",
        response_type="text/plain",
        responses={200: "Prometheus text exposition format"},
        operation_id="get_metrics",
        extension=True,
        errors=(401, 403, 404),
    ),
]
