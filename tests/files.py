"""Helpers for the files tests: presigned URLs for the test client, S3 ETags, and where a
file's bytes are on disk. The callers and groups are the world's (tests/world.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from yarl import URL

from edge.app import Site

PART = 1024  # the smallest multipart part the files tests' config allows (default: 5 MiB)


def relative(url: str) -> str:
    """The test client takes paths: a presigned URL without its scheme and host."""
    return str(URL(url, encoded=True).raw_path_qs)


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def multipart_etag(parts: list[bytes]) -> str:
    digests = b"".join(hashlib.md5(p).digest() for p in parts)
    return f"{hashlib.md5(digests).hexdigest()}-{len(parts)}"


def blob_paths(world: Any, path: str) -> list[Path]:
    """Where a file's bytes are on disk (a world's site): its blobs, in order."""
    site: Site = world.site
    rows = site.services.db.read(
        lambda c: c.execute(
            "SELECT b.blob FROM file_blobs b JOIN files f ON f.id = b.file_id"
            " WHERE f.path = ? ORDER BY b.seq",
            (path,),
        ).fetchall()
    )
    return [site.services.blobs.path_of(str(r[0])) for r in rows]
