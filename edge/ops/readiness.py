"""Tell systemd that the server is ready (the unit is `Type=notify`).

`systemctl start edge` and `systemctl restart edge` then return once edge has migrated its
database and listens, and fail if it exits first: the Debian package's upgrade keeps the
previous executable until a restart of the new one has succeeded this way. The protocol is
one datagram, `READY=1`, to the socket named by `NOTIFY_SOCKET` (sd_notify(3)); without that
variable (edge not started by systemd) nothing is sent.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger("edge.readiness")


def ready() -> None:
    """Say READY=1 to systemd, when systemd asked for it."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    if address.startswith("@"):  # an abstract socket
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(b"READY=1")
    except OSError as exc:
        log.warning("could not tell systemd that edge is ready (%s): %s", address, exc)
