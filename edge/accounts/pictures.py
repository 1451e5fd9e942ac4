"""Profile pictures: checked by decoding them, then scaled so the longer side is 256 px.

A picture is accepted for what it is, not for its name or declared type: Pillow must
decode it as JPEG or PNG. Decoding and scaling run on a worker thread.
"""

from __future__ import annotations

import asyncio
import io
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

from edge.accounts.users import Users
from edge.kernel import clock
from edge.kernel.errors import Denied, ValidationError
from edge.kernel.principal import Principal
from storage import pictures as store
from storage.database import Database

MAX_BYTES = 10 * 1024 * 1024
MIN_SIDE = 24
SIDE = 256
MAX_PIXELS = 40_000_000  # about 6300 x 6300: larger is refused before it is decoded
CONTENT_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png"}
FIELD = "file"
NOT_AN_IMAGE = "must be a JPEG or PNG image"


@dataclass(frozen=True)
class Picture:
    content_type: str
    data: bytes
    size: tuple[int, int]


def too_large() -> ValidationError:
    return ValidationError(FIELD, f"must be at most {MAX_BYTES // (1024 * 1024)} MB")


def process(data: bytes) -> Picture:
    """Decode, check and scale one upload; a ValidationError says what is wrong with it."""
    if len(data) > MAX_BYTES:
        raise too_large()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=tuple(CONTENT_TYPES)) as image:
                return _scaled(image)
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ValidationError(FIELD, NOT_AN_IMAGE) from None
    except (OSError, SyntaxError, ValueError):  # truncated or corrupt data
        raise ValidationError(FIELD, f"{NOT_AN_IMAGE} (this one could not be decoded)") from None


def _scaled(image: Image.Image) -> Picture:
    kind = str(image.format)
    width, height = image.size
    if width < MIN_SIDE or height < MIN_SIDE:
        raise ValidationError(FIELD, f"must be at least {MIN_SIDE}x{MIN_SIDE} pixels")
    if width * height > MAX_PIXELS:
        raise ValidationError(FIELD, f"must have at most {MAX_PIXELS} pixels")
    image.load()
    upright = ImageOps.exif_transpose(image) or image
    converted = upright.convert(_mode(upright, kind))
    scale = SIDE / max(converted.size)
    size = (max(1, round(converted.width * scale)), max(1, round(converted.height * scale)))
    resized = converted.resize(size, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if kind == "JPEG":
        resized.save(out, "JPEG", quality=90)
    else:
        resized.save(out, "PNG", optimize=True)
    return Picture(CONTENT_TYPES[kind], out.getvalue(), size)


def _mode(image: Image.Image, kind: str) -> str:
    if kind == "JPEG":
        return "RGB"
    has_alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    return "RGBA" if has_alpha else "RGB"


class Pictures:
    def __init__(self, db: Database, users: Users) -> None:
        self._db = db
        self._users = users

    async def set_own(self, principal: Principal, data: bytes) -> None:
        await self._store(_own(principal), data)

    async def delete_own(self, principal: Principal) -> None:
        account_id = _own(principal)
        await self._db.write(lambda c: store.delete(c, account_id))

    async def set_for(self, principal: Principal, user_id: str, data: bytes) -> None:
        self._users.require(self._users.target(principal, user_id), "update")
        await self._store(user_id, data)

    async def delete_for(self, principal: Principal, user_id: str) -> None:
        self._users.require(self._users.target(principal, user_id), "update")
        await self._db.write(lambda c: store.delete(c, user_id))

    async def _store(self, account_id: str, data: bytes) -> None:
        picture = await asyncio.to_thread(process, data)
        now = clock.now_iso()
        await self._db.write(
            lambda c: store.put(c, account_id, picture.content_type, picture.data, now)
        )


def _own(principal: Principal) -> str:
    if principal.kind != "user":
        raise Denied("Only user accounts have a profile picture here")
    return principal.account_id
