"""S3's ETags, computed the way S3 does so any S3 client can check them.

A single-part object's (and each part's) ETag is the MD5 of its bytes, in hex. A multipart
object's is the MD5 of its parts' binary MD5 digests, concatenated in part order, then `-`
and the number of parts. Stored and shown in JSON without quotes; quoted in HTTP headers.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

_MD5_HEX = re.compile(r"^[0-9a-f]{32}$")


def of_part(md5: bytes) -> str:
    return md5.hex()


def of_multipart(digests: Sequence[bytes]) -> str:
    joined = hashlib.md5(b"".join(digests), usedforsecurity=False).hexdigest()
    return f"{joined}-{len(digests)}"


def quoted(etag: str) -> str:
    return f'"{etag}"'


def unquoted(text: str) -> str:
    """An ETag as a client may send it back: quoted or not, `W/` or not, any case."""
    value = text.strip()
    if value.startswith("W/"):
        value = value[2:]
    return value.strip('"').lower()


def is_part_etag(value: str) -> bool:
    return bool(_MD5_HEX.match(value))
