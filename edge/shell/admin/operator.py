"""The operator: who `edge admin ...` acts as, and how a command reaches the site.

The person at the server's own shell holds the data folder, so they may do whatever staff
may; they have no account and no token. Their principal has the kind `operator`: the
services treat it as staff (edge/kernel/principal.py), and every audit event it causes names
`operator` as the actor, with no actor ID (docs/audit.md). Rows it creates or changes
record the first staff account in `created_by` / `last_updated_by`, as the site's owner.

A command opens the data folder as `edge serve` does. Beside a running server that is
safe: every write goes through the database, and the server's caches follow it (its
sessions, API keys and permission answers are dropped when the database says so).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from edge import banner
from edge.kernel.config import Config
from edge.kernel.principal import Principal

if TYPE_CHECKING:  # building the parser of every `edge` command must stay light
    from edge.services import Services

T = TypeVar("T")


@dataclass(frozen=True)
class Operator:
    """The operator acting on the whole site, or (with `--org`) in one organization or
    project; `where` is that place as the operator named it, for messages."""

    services: Services
    principal: Principal
    where: str


def acting(services: Services, org: str | None) -> Operator:
    """`org`: an org's or a project's ID or alias, as `--org` takes it everywhere (a
    project: the operator acts in that project, as a project-scoped session does)."""
    from storage import staff

    owner = str(services.db.read(staff.first)["id"])
    if org is None:
        return Operator(services, Principal("operator", owner, None), "the site")
    found, project = services.projects.resolve_client(org, field="org")
    project_id = project.id if project is not None else None
    return Operator(services, Principal("operator", owner, None, found.id, project_id), org)


def run(
    config: Config, args: argparse.Namespace, work: Callable[[Operator], Coroutine[Any, Any, T]]
) -> T:
    """Open the site, do `work` as the operator (in `args.org`, if the command has one),
    close it. The staff account made on a first use is announced once, on standard error
    when standard output is a JSON document."""
    from edge import app

    site = app.open_site(config)
    try:
        return asyncio.run(work(acting(site.services, getattr(args, "org", None))))
    finally:
        site.services.db.close()
        out = sys.stderr if getattr(args, "json", False) else sys.stdout
        with contextlib.redirect_stdout(out):
            banner.first_staff(config, site.first_staff)
