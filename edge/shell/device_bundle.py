"""`edge device bundle DEVICE --out DIR`: everything a device needs to reach the broker over
MQTT/TLS with its certificate, in one folder (docs/devices.md, "Onboarding a device"); the
files are edge/devices/bundle.py's, which `GET /v2/devices/{device_id}/bundle` serves too.

A device's private key is shown once, when its certificate is issued, and the server keeps
none (docs/devices.md): a bundle cannot be made from what the server holds. So the command
resets the device's MQTT credentials, as `POST /v2/devices/{id}/reset-mqtt-credentials`
does: a new key pair and certificate, the earlier certificate superseded from then on, and
an audit event `device_certificate_reset` by the operator. Use it for a device just created
or when its certificate is to be replaced; its API key is not touched.

The folder (new or empty, owner-only) holds the bundle's files, the private key 0600.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from edge.devices import bundle
from edge.devices.bundle import CA, CERT, CONFIG, EXAMPLE, KEY, README
from edge.kernel.errors import Conflict
from edge.services import Services
from storage import layout

__all__ = ["CA", "CERT", "CONFIG", "EXAMPLE", "KEY", "README", "Made", "make"]


@dataclass(frozen=True)
class Made:
    device_id: str
    folder: Path
    url: str  # mqtts://host:port


async def make(services: Services, device_id: str, out: Path) -> Made:
    """Check the folder and the listener first, then reset and write (a refusal resets
    nothing)."""
    config = services.config
    bundle.require_tls_listener(config)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Conflict(f"{out} is not an empty folder; choose a new one for the bundle")
    device, issued = await services.devices.operator_reset_mqtt_credentials(device_id)
    layout.private_dir(out)
    made = bundle.files(config, device, issued, services.site_ca.pem)
    layout.write_secret(out / KEY, made.pop(KEY))
    for name, content in made.items():
        (out / name).write_bytes(content)
    return Made(device.id, out, bundle.describe(config, device, issued)["mqtts_url"])
