"""Real images made by Pillow, for the profile picture tests (the API's and the SDK's)."""

from __future__ import annotations

import io

from PIL import Image


def image_bytes(kind: str, size: tuple[int, int], mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, color="red" if mode != "P" else 1).save(out, kind)
    return out.getvalue()
