"""The data baseline: a bare aiohttp + SQLite handler running the statements edge runs.

GET is the primary-key SELECT of every column of one entry (storage/data.py `get`); PUT
is the same `INSERT OR REPLACE` of a whole row (storage/data.py `save`), committed on its
own with synchronous=FULL (durable, one fsync per request). No auth, no permission check,
no validation, no signing, no group commit. It runs on a copy of edge's own database, so
table, indexes and rows are identical.
"""

from __future__ import annotations

import argparse
import json
import sqlite3

from aiohttp import web

from storage.data import COLUMNS

SELECT = f"SELECT {', '.join(COLUMNS)} FROM data WHERE group_id = ? AND path = ?"
SAVE = (
    f"INSERT OR REPLACE INTO data ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"
)


def build(db_path: str) -> web.Application:
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")

    async def ping(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def get_entry(request: web.Request) -> web.Response:
        key = (request.match_info["group_id"], "/" + request.match_info["path"])
        row = conn.execute(SELECT, key).fetchone()
        if row is None:
            return web.json_response({"message": "not found"}, status=404)
        entry = dict(zip(COLUMNS, row, strict=True))
        for name in ("value", "updated_by_list", "updated_date_list"):
            entry[name] = json.loads(entry[name])
        return web.json_response({"data": entry})

    async def put_entry(request: web.Request) -> web.Response:
        body = await request.json()
        key = (request.match_info["group_id"], "/" + request.match_info["path"])
        row = dict.fromkeys(COLUMNS)
        row.update(group_id=key[0], path=key[1], value=json.dumps(body["value"]), revision=1)
        row.update(created_by="bare", created_date="now", last_updated_by="bare")
        row.update(last_updated_date="now", updated_by_list="[]", updated_date_list="[]")
        row.update(signature="")
        conn.execute(SAVE, [row[name] for name in COLUMNS])
        return web.json_response({"message": "Success"})

    app = web.Application()
    app.router.add_get("/ping", ping)
    app.router.add_get("/data/{group_id}/{path:.*}", get_entry)
    app.router.add_put("/data/{group_id}/{path:.*}", put_entry)
    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True)
    args = parser.parse_args()
    web.run_app(build(args.db), host="127.0.0.1", port=args.port, access_log=None, print=None)
