"""The child of tests/faults/test_full_tmpfs.py: run inside a private mount namespace
(`unshare --mount`), it mounts a small tmpfs at the folder it is given, serves a fresh data
folder from it on a loopback port, fills the filesystem with a file, asks /v2/health and
writes to the database, then deletes the file and asks again. It prints what it saw as
one JSON object on its last line.

    python -m tests.faults.full_disk_child <mount point>
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, web

from edge.app import PROBE, create_app, open_site
from storage.space import DiskFull, NotWritable
from tests.conftest import make_config

SIZE = "16m"


def fill(path: Path) -> int:
    """Write zeros to `path` until the filesystem has no room left; the bytes written."""
    written = 0
    block = bytes(64 * 1024)
    with open(path, "wb", buffering=0) as handle:
        while True:
            try:
                written += handle.write(block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        with contextlib.suppress(OSError):
            while True:  # the last few bytes a block would not take
                written += handle.write(bytes(512))
    return written


async def write(site: Any) -> str:
    """A database write of 64 KiB: ok, full or not writable."""
    try:
        await site.services.db.write(
            lambda c: (
                c.execute("CREATE TABLE IF NOT EXISTS ballast (b BLOB)")
                or c.execute("INSERT INTO ballast VALUES (zeroblob(65536))")
            )
        )
    except DiskFull:
        return "full"
    except NotWritable:
        return "not writable"
    return "ok"


async def health(app: web.Application, url: str) -> dict[str, Any]:
    await app[PROBE].once()
    async with ClientSession() as session, session.get(f"{url}/v2/health") as response:
        body: dict[str, Any] = await response.json()
        return body


async def run(folder: Path) -> dict[str, Any]:
    site = open_site(make_config(folder / "data"))
    app = create_app(site)
    runner = web.AppRunner(app)
    await runner.setup()
    server = web.TCPSite(runner, "127.0.0.1", 0)
    await server.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    seen: dict[str, Any] = {"before": await health(app, url)}
    filler = folder / "filler"
    seen["filled"] = fill(filler)
    seen["write_while_full"] = await write(site)
    seen["while_full"] = await health(app, url)
    filler.unlink()
    seen["after"] = await health(app, url)
    seen["write_after"] = await write(site)
    await runner.cleanup()
    return seen


def main() -> None:
    folder = Path(sys.argv[1])
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(folder)], check=True)
    os.environ.setdefault("EDGE_ADMIN_PASSWORD", "a-password-for-the-full-disk-test")
    seen = asyncio.run(run(folder))
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
