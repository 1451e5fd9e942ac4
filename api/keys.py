"""Typed keys for what the application and each request carry."""

from __future__ import annotations

from aiohttp import web

from edge.services import Services

SERVICES = web.AppKey("services", Services)
REQUEST_ID = "edge.request_id"
PRINCIPAL = "edge.principal"
