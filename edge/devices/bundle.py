"""What a device needs to reach the broker over MQTT/TLS with its certificate, as files:
the certificate, the private key, the site CA, `device.json` naming the broker's host,
ports and the device's topics, `README.txt` with the `mosquitto_pub`/`mosquitto_sub` and
paho-mqtt lines that work with them, and `paho_example.py`, which connects, subscribes and
publishes once. `edge device bundle` writes them to a folder (edge/shell/device_bundle.py);
`GET /v2/devices/{device_id}/bundle` serves them as a zip archive (api/bundles.py). Both
first issue new credentials: the server keeps no private key to put in a bundle.
"""

from __future__ import annotations

import json
from typing import Any

from edge.devices.topics import own_topic
from edge.kernel.config import Config
from edge.kernel.errors import Conflict
from storage.records import Device

CERT, KEY, CA, CONFIG, README, EXAMPLE = (
    "device.crt",
    "device.key",
    "ca.pem",
    "device.json",
    "README.txt",
    "paho_example.py",
)


def require_tls_listener(config: Config) -> None:
    """A bundle is for MQTT over TLS: none when that listener is off (a state of the
    server, not a fault of the request: a 409)."""
    if not config.mqtt_tls_port:
        raise Conflict("mqtt_tls_port is 0: MQTT over TLS is off, so no bundle")


def files(
    config: Config, device: Device, issued: dict[str, Any], ca_pem: bytes
) -> dict[str, bytes]:
    """The bundle's files by name, from new MQTT credentials (NewMqttCredentials)."""
    described = describe(config, device, issued)
    return {
        KEY: issued["private_key"].encode(),
        CERT: issued["certificate"].encode(),
        CA: ca_pem,
        CONFIG: (json.dumps(described, indent=2) + "\n").encode(),
        README: readme(described).encode(),
        EXAMPLE: paho_example(described).encode(),
    }


def describe(config: Config, device: Device, issued: dict[str, Any]) -> dict[str, Any]:
    """device.json: where the broker is, the files, and the topics the device may use."""
    root = issued["root_scope"]
    host = issued["broker"]
    return {
        "device_id": device.id,
        "broker": host,
        "mqtts_port": config.mqtt_tls_port,
        "mqtts_url": f"mqtts://{host}:{config.mqtt_tls_port}",
        "mqtt_port": config.mqtt_port or None,
        "root_scope": root,
        "own_topic": own_topic(root, device.id),
        "scopes": {
            f"{root}{scope}": {
                "publish": bool(rights.get("can_publish")),
                "subscribe": bool(rights.get("can_subscribe")),
            }
            for scope, rights in device.iot_scopes.items()
        },
        "certificate": CERT,
        "private_key": KEY,
        "ca": CA,
        "root_ca_url": issued["root_ca"],
    }


def readme(d: dict[str, Any]) -> str:
    tls = f"-h {d['broker']} -p {d['mqtts_port']} --cafile {CA} --cert {CERT} --key {KEY}"
    own, device_id = d["own_topic"], d["device_id"]
    lines = [
        f"Device {device_id}: MQTT over TLS with its certificate, at {d['mqtts_url']}.",
        f"It may publish and subscribe under {own}/ (its own topics)"
        + (f" and, as device.json says, under {', '.join(d['scopes'])}." if d["scopes"] else "."),
        "",
        "Run these in this folder. Subscribe (Debian: apt install mosquitto-clients):",
        f"  mosquitto_sub {tls} -i {device_id} -t '{own}/#' -v",
        "Publish:",
        f"  mosquitto_pub {tls} -i {device_id} -t '{own}/hello' -m 'hello' -q 1",
        "",
        "With paho-mqtt 2.x (Python): python3 paho_example.py (it subscribes, publishes once",
        "and prints what it receives); the lines that matter:",
        f"  client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id={device_id!r})",
        f"  client.tls_set(ca_certs={CA!r}, certfile={CERT!r}, keyfile={KEY!r})",
        f"  client.connect({d['broker']!r}, {d['mqtts_port']})",
        "",
        f"{KEY} is the device's private key: copy it to the device only, and delete this",
        "folder once it is there. The server keeps no copy; a new bundle issues a new",
        "certificate and the earlier one stops working.",
    ]
    if d["mqtt_port"]:
        lines += [
            "",
            f"Over plain TCP (port {d['mqtt_port']}) the device signs in with its API key",
            "instead (shown once at creation, or by POST /v2/devices/{id}/reset-api-key):",
            f"  mosquitto_pub -h {d['broker']} -p {d['mqtt_port']} -i {device_id}"
            f" -u {device_id} -P \"$API_KEY\" -t '{own}/hello' -m 'hello'",
        ]
    return "\n".join(lines) + "\n"


def paho_example(d: dict[str, Any]) -> str:
    return f'''"""Connect as device {d["device_id"]} over MQTT/TLS with this folder's files,
subscribe to its own topics, publish one message and print it when it comes back."""

import sys

import paho.mqtt.client as mqtt

TOPIC = {d["own_topic"] + "/hello"!r}
client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id={d["device_id"]!r})
client.tls_set(ca_certs={CA!r}, certfile={CERT!r}, keyfile={KEY!r})


def on_connect(client, userdata, flags, reason, properties):
    if reason.is_failure:
        sys.exit(f"refused: {{reason}}")
    client.subscribe({d["own_topic"] + "/#"!r}, qos=1)


def on_subscribe(client, userdata, mid, reasons, properties):
    client.publish(TOPIC, b"hello from the bundle", qos=1)


def on_message(client, userdata, message):
    print(f"received {{message.topic}}: {{message.payload.decode()}}", flush=True)
    client.disconnect()


client.on_connect, client.on_subscribe, client.on_message = on_connect, on_subscribe, on_message
client.connect({d["broker"]!r}, {d["mqtts_port"]})
client.loop_forever()
'''
