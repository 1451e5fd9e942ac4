"""A device's bundle over HTTP (docs/provisioning.md), an extension of the interface.

- GET /v2/devices/{device_id}/bundle   admins of the device

The zip archive of the files `edge device bundle` writes (edge/devices/bundle.py). The
server keeps no private key, so each fetch issues new MQTT credentials first, as
`reset-mqtt-credentials` does: the certificate the device held is superseded, and the
answer is never cached (`Cache-Control: no-store`). So it has no HEAD (a 405): one
would issue credentials and throw them away.
"""

from __future__ import annotations

import io
import zipfile

from aiohttp import web

from api import media_types
from api.keys import SERVICES
from api.routing import Route, principal
from edge.devices import bundle

ZIP = "application/zip"


def archive(files: dict[str, bytes], folder: str) -> bytes:
    """The files in one folder of a zip archive; the private key readable by its owner only."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as made:
        for name, content in files.items():
            entry = zipfile.ZipInfo(f"{folder}/{name}")
            entry.external_attr = (0o600 if name == bundle.KEY else 0o644) << 16
            made.writestr(entry, content, zipfile.ZIP_DEFLATED)
    return out.getvalue()


async def get_device_bundle(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    device_id = request.match_info["device_id"]
    device, issued = await services.device_certificates.bundle(principal(request), device_id)
    files = bundle.files(services.config, device, issued, services.site_ca.pem)
    folder = f"{device.id}-bundle"
    return web.Response(
        body=archive(files, folder),
        content_type=media_types.chosen(request, ZIP),
        headers={
            "Content-Disposition": f'attachment; filename="{folder}.zip"',
            "Cache-Control": "no-store",
        },
    )


ROUTES = [
    Route(
        "GET",
        "/v2/devices/{device_id}/bundle",
        get_device_bundle,
        "token",
        "A device's bundle for MQTT over TLS (admins of the device): a zip of its new"
        " certificate and private key, the site CA, device.json and examples. Each fetch"
        " issues new credentials; the certificate the device held is superseded",
        "devices",
        responses={200: "zip archive"},
        response_type=media_types.either(ZIP),
        extension=True,
        errors=(403, 409),
        head=False,  # a HEAD would issue new credentials and throw them away: a 405
    ),
]
