"""A tenant built through the public interface only, so it works against any engine.

Staff creates an org; an org admin, a plain user (who may read users, nothing else at org
level) and a target user with no grants of their own. `grow` has the admin create groups
(each gives the admin an access object: create_own_access) and grant the plain user read
access to each, with concurrent clients (this is setup, not a measured figure), and reports
the rate per step so that a creation rate that sinks as the site grows shows.

Before any of that, staff makes a project with BASELINE groups that both callers may read
(the admin as org admin, the plain user through one project access), so that a page of
100 groups is full at every N and holds the same rows: a list page then compares like with
like, and what changes with N is only what the callers hold.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.servers import PASSWORD

MEMBER_PASSWORD = "bench-member-password-1"
WORDS = ("north", "south", "east", "west", "day", "night", "early", "late", "inner", "outer")
SEARCH_WORD = WORDS[0]  # one group in ten carries it
BASELINE = 110  # groups every caller may read before N grows (a page of 100 stays full)


@dataclass
class World:
    base: str
    alias: str
    admin_id: str
    user_id: str
    target_id: str
    groups: list[str] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)

    async def sign_in_all(self) -> None:
        """Fresh access tokens for the admin and the plain user."""
        async with aiohttp.ClientSession() as session:
            for who in ("admin", "user"):
                form = _login(f"{who}@{self.alias}.test", MEMBER_PASSWORD, client_id=self.alias)
                self.tokens[who] = await _token(session, self.base, form)


@dataclass(frozen=True)
class Step:
    groups: int  # N after the step
    created: int
    groups_per_s: float
    grants_per_s: float


async def build(base: str, alias: str) -> World:
    async with aiohttp.ClientSession() as session:
        staff = await _token(session, base, _login("admin", PASSWORD))
        org = {"name": f"Bench {alias}", "alias": alias, "access_token_expire_hours": 24}
        await _call(session, base, "POST", "/v2/orgs", staff, org)
        scoped = await _token(session, base, _login("admin", PASSWORD, scope=alias))
        admin_id = await _user(session, base, scoped, alias, "admin", {"is_admin": True})
        admin = await _token(
            session, base, _login(f"admin@{alias}.test", MEMBER_PASSWORD, client_id=alias)
        )
        reader = {"user_permissions": {"can_read": True}}
        user_id = await _user(session, base, admin, alias, "user", reader)
        target_id = await _user(session, base, admin, alias, "target", None)
        await _baseline(session, base, scoped, admin, user_id)
    world = World(base, alias, admin_id, user_id, target_id)
    await world.sign_in_all()
    return world


async def grow(world: World, size: int, concurrency: int = 8) -> Step:
    """Create groups up to `size` (admin holds each), and grant the plain user each."""
    start = len(world.groups)
    admin = world.tokens["admin"]
    names = [f"Ward {i} {WORDS[i % len(WORDS)]}" for i in range(start, size)]
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as s:
        began = time.perf_counter()
        created = await _gather(
            concurrency,
            (_created_id(s, world.base, admin, "/v2/groups", {"name": n}, "group") for n in names),
        )
        made = time.perf_counter() - began
        began = time.perf_counter()
        grant = {"can_read": True}
        await _gather(
            concurrency,
            (
                _call(s, world.base, "POST", f"/v2/groups/{g}/access/{world.user_id}", admin, grant)
                for g in created
            ),
        )
        granted = time.perf_counter() - began
    world.groups.extend(created)
    return Step(size, len(created), len(created) / made, len(created) / granted)


async def _baseline(
    session: aiohttp.ClientSession, base: str, staff: str, admin: str, user_id: str
) -> None:
    """A project of BASELINE groups (made by staff, so nobody holds access to them one by
    one) whose groups the plain user may read through one project access."""
    project = await _created_id(session, base, staff, "/v2/projects", {"name": "Base"}, "project")
    for i in range(BASELINE):
        body = {"name": f"Base {i} {WORDS[i % len(WORDS)]}", "project_id": project}
        await _call(session, base, "POST", "/v2/groups", staff, body)
    grant = {"group_permissions": {"can_read": True}}
    await _call(session, base, "POST", f"/v2/projects/{project}/access/{user_id}", admin, grant)


async def check(base: str, path: str, token: str) -> None:
    """One request before a run: wrk counts failures, but this names what failed."""
    async with aiohttp.ClientSession() as session:
        await _call(session, base, "GET", path, token)


async def _gather(limit: int, calls: Iterable[Awaitable[Any]]) -> list[Any]:
    semaphore = asyncio.Semaphore(limit)

    async def bounded(call: Awaitable[Any]) -> Any:
        async with semaphore:
            return await call

    return list(await asyncio.gather(*(bounded(c) for c in calls)))


async def _user(
    session: aiohttp.ClientSession,
    base: str,
    token: str,
    alias: str,
    name: str,
    org_permissions: dict[str, Any] | None,
) -> str:
    body: dict[str, Any] = {
        "email": f"{name}@{alias}.test",
        "username": name,
        "password": MEMBER_PASSWORD,
    }
    if org_permissions is not None:
        body["org_permissions"] = org_permissions
    return await _created_id(session, base, token, "/v2/users", body, "user")


async def _created_id(
    session: aiohttp.ClientSession, base: str, token: str, path: str, body: Any, key: str
) -> str:
    reply = await _call(session, base, "POST", path, token, body)
    return str(reply[key]["id"])


def _login(username: str, password: str, **extra: str) -> dict[str, str]:
    return {"grant_type": "password", "username": username, "password": password, **extra}


async def _token(session: aiohttp.ClientSession, base: str, form: dict[str, str]) -> str:
    return str((await _call(session, base, "POST", "/v2/auth/token", form=form))["access_token"])


async def _call(
    session: aiohttp.ClientSession,
    base: str,
    method: str,
    path: str,
    token: str | None = None,
    body: Any = None,
    form: dict[str, str] | None = None,
) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with session.request(
        method, base + path, json=body, data=form, headers=headers
    ) as response:
        text = await response.text()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {text[:300]}")
        return json.loads(text) if text else {}
