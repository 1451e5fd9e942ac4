"""The console's files (api/console.py): served from the package with a strict policy, the
idle sign-out taken from the settings, nothing outside the folder, vendored code with its
licence, and no script the page could run inline."""

from __future__ import annotations

import re

import pytest

from api import console
from api.console import FOLDER
from tests.conftest import Api

STRICT = ("script-src 'self';", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'")


async def test_the_console_redirects_to_its_folder(api: Api) -> None:
    answer = await api.client.get("/console", allow_redirects=False)
    assert (answer.status, answer.headers["Location"]) == (301, "/console/")


async def test_the_page_has_a_strict_policy_and_no_inline_script(api: Api) -> None:
    answer = await api.client.get("/console/")
    page = await answer.text()
    policy = answer.headers["Content-Security-Policy"]
    assert answer.status == 200 and answer.content_type == "text/html"
    assert all(part in policy for part in STRICT), policy
    assert "unsafe" not in policy
    assert re.findall(r"<script[^>]*>", page) == [
        '<script type="module" src="/console/js/main.js">'
    ]
    assert answer.headers["Cache-Control"] == "no-store"  # it carries the settings


async def test_the_idle_sign_out_comes_from_the_settings(api: Api) -> None:
    page = await (await api.client.get("/console/")).text()
    assert '<meta name="edge-idle-minutes" content="15.0">' in page


@pytest.mark.world(console_idle_minutes=2.5)
async def test_a_site_sets_its_own_idle_sign_out(api: Api) -> None:
    page = await (await api.client.get("/console/")).text()
    assert '<meta name="edge-idle-minutes" content="2.5">' in page


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("js/main.js", "text/javascript"),
        ("js/pages/users.js", "text/javascript"),
        ("console.css", "text/css"),
        ("vendor/qrcode-generator-2.0.4/qrcode.mjs", "text/javascript"),
        ("vendor/qrcode-generator-2.0.4/LICENSE.txt", "text/plain"),
    ],
)
async def test_each_file_is_served_with_its_type_and_policy(
    api: Api, name: str, content_type: str
) -> None:
    answer = await api.client.get(f"/console/{name}")
    assert (answer.status, answer.content_type) == (200, content_type)
    assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]
    assert await answer.read() == (FOLDER / name).read_bytes()


@pytest.mark.parametrize(
    "name",
    [
        "nothing.js",
        "js/../../system.py",
        "js/%2e%2e/%2e%2e/system.py",
        "..%2F..%2Fsystem.py",
        ".hidden.js",
        "js//main.js",
        "index.html",  # the page is served at /console/ only, with its settings
        "js",
    ],
)
async def test_nothing_else_is_served(api: Api, name: str) -> None:
    status, body = await api.call("GET", f"/console/{name}")
    assert status == 404 and set(body) == {"message"}


@pytest.mark.parametrize(
    "name",
    ["a" * 300 + ".js", "js/" + "b" * 256 + ".css", "/".join(["c" * 250] * 20) + ".js"],
)
async def test_a_name_too_long_for_the_filesystem_is_a_404(api: Api, name: str) -> None:
    """A part over the filesystem's NAME_MAX once made `is_file` raise: a 500."""
    status, body = await api.call("GET", f"/console/{name}")
    assert status == 404 and set(body) == {"message"}


async def test_no_name_a_client_makes_up_is_remembered(api: Api) -> None:
    """Asking for names the folder does not hold grows no cache of the module: a client
    that makes up names cannot grow the server's memory."""

    def remembered() -> dict[str, int]:
        caches = {n: getattr(console, n) for n in dir(console)}
        return {n: f.cache_info().currsize for n, f in caches.items() if hasattr(f, "cache_info")}

    await api.call("GET", "/console/js/main.js")
    before = remembered()
    for i in range(50):
        status, _ = await api.call("GET", f"/console/js/made-up-{i}.js")
        assert status == 404
    assert remembered() == before


def test_the_files_served_are_those_of_the_folder() -> None:
    on_disk = {
        str(path.relative_to(FOLDER))  # type: ignore[arg-type]
        for path in FOLDER.rglob("*")  # type: ignore[attr-defined]
        if path.is_file() and path.suffix in console.TYPES
    }
    assert set(console.FILES) == on_disk and "js/main.js" in on_disk


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST"])
@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/console",
        "/console/",
        "/console/js/main.js",
        "/console/nothing.js",
        "/console/index.html",
    ],
)
async def test_every_console_answer_carries_the_policy(api: Api, method: str, path: str) -> None:
    """The redirects, the 404s and the 405s as well as the files (docs/console.md)."""
    answer = await api.client.request(method, path, allow_redirects=False)
    assert answer.headers["Content-Security-Policy"] == console.CSP, (answer.status, path)
    assert answer.headers["X-Frame-Options"] == "DENY"


async def test_other_answers_keep_their_own_policy(api: Api) -> None:
    answer = await api.client.get("/v2/health")
    assert answer.headers.get("Content-Security-Policy") != console.CSP


def test_no_script_of_the_console_evaluates_text() -> None:
    """The CSP forbids eval; the console's own code does not try (vendored code aside,
    which the browser tests run under the policy)."""
    for script in (FOLDER / "js").rglob("*.js"):  # type: ignore[attr-defined]
        text = script.read_text("utf-8")
        assert not re.search(r"\beval\(|new Function\(|\.innerHTML\s*=|setTimeout\(\"", text), (
            script
        )
