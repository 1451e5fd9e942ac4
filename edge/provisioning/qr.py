"""The QR code of a new claim, for a technician's phone (docs/provisioning.md).

It holds a small JSON object, `{"enroll": <URL of POST /v2/provisioning/enroll>,
"claim_id": ..., "secret": ...}`, which a commissioning app reads and hands to the device
(over its local setup link, Bluetooth or a USB cable); the device then enrolls itself.
It is sent as a `data:image/png;base64,...` URL: an <img> shows it as it is, and it exists
only in that one answer, since the secret is not kept.
"""

from __future__ import annotations

import base64
import io
import json

import segno

SCALE = 6  # pixels per module: about 250 px wide for a claim, easy to scan from a screen


def contents(enroll_url: str, claim_id: str, secret: str) -> str:
    return json.dumps({"enroll": enroll_url, "claim_id": claim_id, "secret": secret})


def data_url(text: str) -> str:
    """The PNG of a QR code of `text` (error correction M), as a data URL."""
    out = io.BytesIO()
    segno.make_qr(text, error="m").save(out, kind="png", scale=SCALE, border=4)
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()
