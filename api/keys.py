"""Typed keys for what the application and each request carry."""

from __future__ import annotations

from aiohttp import web

from edge.kernel.principal import Principal
from edge.services import Services

SERVICES = web.AppKey("services", Services)
REQUEST_ID = web.RequestKey("request_id", str)
PRINCIPAL = web.RequestKey("principal", Principal)
# How a route asks for credentials in a 401 (WWW-Authenticate) when not as Bearer: EST
# simpleenroll takes HTTP Basic (RFC 7030 3.2.3). "" asks for none: EST simplereenroll
# takes a TLS client certificate, which no HTTP authentication scheme carries.
CHALLENGE = web.RequestKey("challenge", str)
