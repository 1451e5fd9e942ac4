"""What a tunnel tells others: the device (an MQTT notice) and a technician (a mail).

The notice goes to `<root_scope>/devices/<device_id>/tunnels`, the device's own namespace
(every device may subscribe there whatever its scopes), at QoS 1, to the device's own
sessions only. An `open` notice names the tunnel, its services, where to connect and where
the device gets its end's token (`token_url`); a `close` notice names the tunnel (the relay
has dropped it already). A notice never carries a token: one queued for an offline agent
is written to the database (its persistent session), and a backup must not hold a live
token; the device fetches its token with its own credentials (edge/tunnels/tunnels.py
`device_token`).
"""

from __future__ import annotations

import json
from typing import Any

from edge.devices.topics import device_topic
from storage.records import Device, Tunnel

TUNNEL_PATH = "/v2/tunnels/{tunnel_id}"
TOKEN_SUFFIX = "/agent/token"  # POST, as the device: its end's token (docs/tunnels.md)


def topic(device: Device) -> str:
    return device_topic(device, "tunnels")


def opened(device: Device, tunnel: Tunnel, base_url: str) -> bytes:
    url = base_url.rstrip("/") + TUNNEL_PATH.format(tunnel_id=tunnel.id)
    body: dict[str, Any] = {
        "action": "open",
        "uuid": tunnel.id,
        "device_id": device.id,
        "services": tunnel.services,
        "expires_date": tunnel.expires_date,
        "url": url,
        "token_url": url + TOKEN_SUFFIX,
    }
    return json.dumps(body).encode()


def closed(tunnel_id: str) -> bytes:
    return json.dumps({"action": "close", "uuid": tunnel_id}).encode()


def connect_command(base_url: str, tunnel: Tunnel) -> str:
    """The command line a technician runs (the token comes from EDGE_TUNNEL_TOKEN)."""
    service = tunnel.services[0]
    return (
        f"edge tunnel connect --server {base_url.rstrip('/')} --tunnel {tunnel.id}"
        f" --service {service} --listen 127.0.0.1:2222"
    )
