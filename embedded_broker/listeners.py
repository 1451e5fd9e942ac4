"""The listeners, from the settings: MQTT over TCP, over TLS (server certificate from the
site CA; device client certificates requested and verified against it), over WebSockets,
and over WebSockets with TLS (the same certificates as the TLS listener), each on HOST and
each turned off by port 0.

A WebSocket connection buffers what TCP would leave in the kernel: the `websockets`
library's defaults let each client hold 16 incoming frames of up to 1 MiB (30 paused
clients took 300 MiB). `websocket_bounds` holds it to what a TCP client may cost: one
frame at most one MQTT packet of `mqtt_max_message_bytes` (its fixed header included),
a few frames waiting, and the write buffer TCP transports have."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edge.certificates import ca
from edge.kernel.config import Config

WS_MAX_QUEUE = 4  # incoming frames buffered before the library stops reading the socket
WS_WRITE_LIMIT = 64 * 1024  # asyncio's high-water mark of a TCP transport's write buffer
MQTT_FIXED_HEADER = 5  # packet type and at most four bytes of remaining length


@dataclass(frozen=True)
class Listener:
    name: str
    kind: str  # amqtt's listener type: "tcp" or "ws"
    port: int
    tls: bool
    label: str
    scheme: str

    @property
    def setting(self) -> str:
        """The setting that gives its port: mqtt_port, mqtt_tls_port, ..."""
        return self.name.replace("-", "_") + "_port"


def enabled(config: Config) -> list[Listener]:
    every = [
        Listener("mqtt", "tcp", config.mqtt_port, False, "MQTT", "mqtt"),
        Listener("mqtt-tls", "tcp", config.mqtt_tls_port, True, "MQTT/TLS", "mqtts"),
        Listener("mqtt-ws", "ws", config.mqtt_ws_port, False, "MQTT/WS", "ws"),
        Listener("mqtt-wss", "ws", config.mqtt_wss_port, True, "MQTT/WSS", "wss"),
    ]
    return [listener for listener in every if listener.port]


def urls(config: Config) -> list[tuple[str, str]]:
    """(label, URL) of each listener, for the startup banner."""
    host = "127.0.0.1" if config.host in ("0.0.0.0", "::") else config.host
    return [(lst.label, f"{lst.scheme}://{host}:{lst.port}") for lst in enabled(config)]


def amqtt_config(config: Config, listeners: list[Listener]) -> dict[str, Any]:
    """amqtt's configuration. Its required "default" listener is left unbound: amqtt copies
    the default's values into the other listeners, which must not inherit TLS. No amqtt
    plugins: every per-message plugin call costs a task, and our checks run in line."""
    entries: dict[str, Any] = {"default": {"type": "tcp", "bind": None}}
    for listener in listeners:
        entry: dict[str, Any] = {"type": listener.kind, "bind": f"{config.host}:{listener.port}"}
        if listener.tls:
            files = ca.server_certificate(config.data_dir, list(config.certificate_names))
            entry.update(ssl=True, certfile=files.cert, keyfile=files.key, cafile=files.ca)
        entries[listener.name] = entry
    return {
        "listeners": entries,
        "plugins": {},
        "timeout_disconnect_delay": 0,
        "session_expiry_interval": config.mqtt_session_expiry_hours * 3600,
    }


def websocket_bounds(max_message_bytes: int) -> dict[str, Any]:
    """The `websockets.serve` arguments that bound one WebSocket client's buffers."""
    return {
        "max_size": max_message_bytes + MQTT_FIXED_HEADER,
        "max_queue": WS_MAX_QUEUE,
        "write_limit": WS_WRITE_LIMIT,
    }
