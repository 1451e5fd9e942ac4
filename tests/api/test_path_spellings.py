"""One name, one spelling: a file or data path names exactly what the client sent, never a
neighbour (docs/files.md and docs/data.md, "Paths").

- A percent-escape that is not UTF-8 (`%FF`) was kept by the URL parser as its three
  characters: `a%FF` and `a%25FF` (the escape of a literal `%FF`) named the same file. It is
  a 400 now; a literal `%` is sent as `%25`.
- Spaces at the ends of a file path were trimmed: `report ` overwrote `report`. They are kept,
  as data paths (and S3 keys) keep them.
"""

from __future__ import annotations

import re

import pytest

from api import openapi
from edge.app import ROUTES
from tests.world import World

pytestmark = pytest.mark.world("content")


NOT_UTF8 = {"message": "path: holds a percent-escape that is not UTF-8 (write a literal % as %25)"}


@pytest.mark.parametrize("kind", ["files", "data"])
async def test_an_escape_that_is_not_utf8_is_a_400_not_the_literal_name(
    world: World, kind: str
) -> None:
    if kind == "files":
        assert (await world.upload("file_editor", "pct%25FF", b"x"))[0] == 200
        group, who, body = world.files_group_id, "file_editor", {}
    else:
        await world.put_data("org_admin", "pct%FF", 1)  # quoted by the helper: pct%25FF
        group, who, body = world.org_group_id, "org_admin", {"value": 1}
    base = f"/v2/groups/{group}/{kind}"
    assert (await world.call(who, "GET", f"{base}/pct%25FF"))[0] == 200  # the literal name
    for spelling in ("pct%FF", "pct%C3", "dir%FF/x", "%ED%A0%80"):  # bad bytes, cut, surrogate
        assert await world.call(who, "PUT", f"{base}/{spelling}", json=body) == (400, NOT_UTF8)
        assert await world.call(who, "GET", f"{base}/{spelling}") == (400, NOT_UTF8)
    status, listed = await world.call(
        "org_admin", "GET", f"{base}/", params={"cascade": "", "paths_only": ""}
    )
    assert status == 200 and listed["paths"] == ["/pct%FF"]
    assert (await world.call(who, "GET", f"{base}/caf%C3%A9"))[0] == 404  # UTF-8: a name


async def test_spaces_at_the_ends_of_a_file_path_are_kept(world: World) -> None:
    for name in ("report", "report%20", "%20report"):
        status, reply = await world.files("file_editor", "PUT", name, json={})
        assert status == 200, reply
        assert (await world.send(reply["url"], name.encode()))[0] == 200
    status, listed = await world.files(
        "file_reader", "GET", "", params={"cascade": "", "paths_only": ""}
    )
    assert status == 200
    assert {"/report", "/report ", "/ report"} <= set(listed["paths"])
    status, body = await world.files("file_reader", "GET", "report%20")
    assert status == 200 and body["file"]["path"] == "/report "
    assert (await world.fetch(body["url"]))[:2] == (200, b"report%20")


async def test_spaces_at_the_ends_of_a_data_path_are_kept(world: World) -> None:
    await world.put_data("org_admin", "note", 1)
    await world.put_data("org_admin", "note ", 2)
    _, plain = await world.data("org_admin", "GET", "note")
    _, spaced = await world.data("org_admin", "GET", "note ")
    assert (plain["data"]["value"], spaced["data"]["value"]) == (1, 2)
    assert spaced["data"]["path"] == "/note "


ROUTED_BY_ID = [r for r in ROUTES if "{" in r.path]


async def test_every_route_with_a_path_parameter_documents_the_escape_400(world: World) -> None:
    """Every operation with a path parameter answers an escape that is not UTF-8 with the
    400 above, whatever its parameter names (a device, a command's request ID), and its
    OpenAPI entry lists that 400 (the suite's responses_as_documented check; #29: the
    twin's and a command's GETs did not)."""
    for route in ROUTED_BY_ID:
        path = openapi.canonical(route.path)
        odd = re.sub(r"{\w+}", "%ff", path)
        kwargs = {"json": {}} if route.method in ("POST", "PUT", "PATCH") else {}
        got = await world.call("org_admin", route.method, odd, **kwargs)
        body = None if route.method == "HEAD" else NOT_UTF8
        assert got == (400, body), f"{route.method} {path}: {got}"
