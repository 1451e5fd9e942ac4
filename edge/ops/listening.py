"""The listening sockets of `edge serve`, bound before anything else happens.

A first start must not create the data folder, keys and the staff account (and print its
password) and only then find a port taken: every listener (HTTP and each MQTT one) is bound
first, and a port that cannot be had is one line naming the setting and the port.
"""

from __future__ import annotations

import socket

from edge.kernel.errors import EdgeError

BACKLOG = 1024


class PortUnavailable(EdgeError):
    """A port (or the address) cannot be listened on: in use, or not allowed."""


def listen(host: str, port: int, setting: str) -> socket.socket:
    """A non-blocking socket listening on HOST:PORT. A host name binds the first address
    it resolves to (use an address to choose)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise PortUnavailable(f"host {host}: {_words(exc)}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise PortUnavailable(f"{setting} {port}: {_words(exc)}") from None
    sock.setblocking(False)
    return sock


def _words(exc: OSError) -> str:
    """The system's reason in lower case: `address already in use`, `permission denied`."""
    text = exc.strerror or str(exc)
    return text[:1].lower() + text[1:]
