"""The client's address, as the sign-in throttle should see it.

Behind a reverse proxy every connection comes from the proxy, so the client's address is
in `X-Forwarded-For`; but any client can send that header, so it is believed only when the
connection comes from a configured trusted proxy (`trusted_proxies`). Each proxy appends
the address it saw, so the client is the right-most entry that is not itself a trusted
proxy; entries further left were written by the client and may be forged.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any

from aiohttp import web

from api.keys import SERVICES

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(request: web.Request) -> str | None:
    remote = request.remote
    networks = _networks(request.app[SERVICES].config.trusted_proxies)
    if remote is None or not networks or not _within(_address(remote), networks):
        return remote
    for hop in reversed(_hops(request)):
        address = _address(hop)
        if address is None:
            return remote  # a proxy wrote something unreadable: trust nothing left of it
        if not _within(address, networks):
            return str(address)
    return remote


def _hops(request: web.Request) -> list[str]:
    headers: Any = request.headers
    return [
        hop.strip() for value in headers.getall("X-Forwarded-For", []) for hop in value.split(",")
    ]


@functools.lru_cache(maxsize=8)
def _networks(configured: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(n, strict=False) for n in configured)


def _address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def _within(address: Address | None, networks: tuple[Network, ...]) -> bool:
    return address is not None and any(address in n for n in networks)
