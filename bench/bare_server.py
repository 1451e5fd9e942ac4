"""The baseline: a bare aiohttp + SQLite handler with no middleware, auth or validation.

Same durability as edge (WAL, synchronous=FULL, one commit per write), so the difference
measured is what edge's layers cost (or save, with group commit).
"""

from __future__ import annotations

import argparse
import json
import secrets
import sqlite3

from aiohttp import web


def build(db_path: str) -> web.Application:
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, body TEXT)")

    async def ok(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def get_item(request: web.Request) -> web.Response:
        row = conn.execute(
            "SELECT body FROM items WHERE id = ?", (request.match_info["id"],)
        ).fetchone()
        if row is None:
            return web.json_response({"message": "not found"}, status=404)
        return web.json_response({"item": json.loads(row[0])})

    async def post_item(request: web.Request) -> web.Response:
        body = await request.json()
        item_id = secrets.token_hex(8)
        conn.execute("INSERT INTO items VALUES (?, ?)", (item_id, json.dumps(body)))
        return web.json_response({"item": {"id": item_id}}, status=201)

    app = web.Application()
    app.router.add_get("/ok", ok)
    app.router.add_get("/items/{id}", get_item)
    app.router.add_post("/items", post_item)
    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True)
    args = parser.parse_args()
    web.run_app(build(args.db), host="127.0.0.1", port=args.port, access_log=None, print=None)
