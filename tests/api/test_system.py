"""Public and service endpoints: health, version, changelog, docs, OpenAPI, security.txt, JWKS."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jwt
import pytest
from aiohttp import web

from edge import BUILD_VERSION, INTERFACE_VERSION
from edge.app import create_app, open_site
from edge.kernel import clock
from edge.ops import releases
from edge.ops.releases import INTERFACE_HISTORY
from tests.conftest import Api, make_config

ASSET_PREFIX = "/v2/docs/assets/"
EXPECTED_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


class _References(HTMLParser):
    """Collects every src and href of a page, and the text of its links."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls.extend(v for k, v in attrs if k in ("src", "href") and v)


def references(page: str) -> list[str]:
    parser = _References()
    parser.feed(page)
    return parser.urls


async def test_version_is_the_interface_version(api: Api) -> None:
    status, body = await api.call("GET", "/v2/version")
    assert status == 200
    assert body["version"] == "2.3.18"
    assert body["server_version"] == "0.1.0"


async def test_changelog_is_public_html_with_the_history(api: Api) -> None:
    response = await api.client.get("/v2/changelog")
    page = await response.text()
    assert response.status == 200
    assert response.content_type == "text/html"
    for version in ("2.3.18", "2.0.1", "0.1.0"):
        assert f'id="v{version}"' in page, version
    entry = re.search(r'id="v2\.0\.1".*?(?=<h3|</section>)', page, re.S)
    assert entry is not None and "422" in entry[0] and "406" in entry[0]
    assert "/v2/docs" in references(page)


async def test_docs_page_loads_only_its_own_assets(api: Api) -> None:
    response = await api.client.get("/v2/docs")
    page = await response.text()
    assert response.status == 200
    assert response.content_type == "text/html"
    assert "http://" not in page and "https://" not in page
    urls = references(page)
    assert "/v2/changelog" in urls
    assets = [u for u in urls if u.startswith(ASSET_PREFIX)]
    assert any(u.endswith(".js") for u in assets) and any(u.endswith(".css") for u in assets)
    assert all(u.startswith("/") for u in urls), urls  # nothing from another host
    csp = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp


async def test_every_referenced_asset_is_served_with_its_type(api: Api) -> None:
    page = await (await api.client.get("/v2/docs")).text()
    assets = [u for u in references(page) if u.startswith(ASSET_PREFIX)]
    assert len(assets) >= 4
    for url in assets:
        response = await api.client.get(url)
        body = await response.read()
        assert response.status == 200, url
        assert response.content_type == EXPECTED_TYPES[Path(url).suffix], url
        assert body, url


async def test_own_script_disables_the_online_validator(api: Api) -> None:
    script = await (await api.client.get(ASSET_PREFIX + "docs.js")).text()
    assert "SwaggerUIBundle" in script and "/v2/openapi.json" in script
    assert re.search(r"validatorUrl:\s*null", script)  # else the page calls validator.swagger.io


@pytest.mark.parametrize("name", ["nope.js", "docs.html", "..%2Fdocs.html", "index.html"])
async def test_unknown_asset_is_404_status(api: Api, name: str) -> None:
    status, body = await api.call("GET", ASSET_PREFIX + name)
    assert status == 404
    assert isinstance(body, dict) and set(body) == {"message"}


async def test_openapi_is_3_1_and_matches_the_router(api: Api, app: web.Application) -> None:
    status, document = await api.call("GET", "/v2/openapi.json")
    assert status == 200
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "2.3.18"
    documented = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }
    routed = {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None
    }
    assert documented <= routed
    # every GET answers HEAD too; the document leaves those HEADs out (docs/openapi.md)
    implied = {("HEAD", path) for method, path in documented if method == "GET"}
    assert routed - documented <= implied


async def test_openapi_operations_are_unique_and_document_errors(api: Api) -> None:
    _, document = await api.call("GET", "/v2/openapi.json")
    ids = [op["operationId"] for ops in document["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))
    token = document["paths"]["/v2/auth/token"]["post"]
    assert "application/x-www-form-urlencoded" in token["requestBody"]["content"]
    assert {"201", "200", "400"} <= set(token["responses"])
    assert "security" not in document["paths"]["/v2/health"]["get"]
    assert document["paths"]["/v2/orgs"]["get"]["security"] == [{"bearer": []}]


async def test_openapi_server_is_relative_without_a_public_url(api: Api) -> None:
    _, document = await api.call("GET", "/v2/openapi.json")
    assert document["servers"] == [{"url": "/"}]


def _fields(text: str) -> dict[str, str]:
    pairs = (line.split(": ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return dict(pairs)


async def test_security_txt_follows_rfc_9116(api: Api) -> None:
    response = await api.client.get("/.well-known/security.txt")
    text = await response.text()
    assert response.status == 200
    assert response.content_type == "text/plain" and response.charset == "utf-8"
    found = _fields(text)
    assert found["Contact"] == "mailto:ops@example.test"
    assert found["Preferred-Languages"] == "en"
    origin = str(api.client.make_url("/")).rstrip("/")
    assert found["Canonical"] == f"{origin}/.well-known/security.txt"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", found["Expires"])
    expires = datetime.strptime(found["Expires"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    now = datetime.now(UTC)
    assert now + timedelta(days=179) < expires <= now + timedelta(days=181)


async def test_security_txt_follows_the_moved_clock(api: Api) -> None:
    clock.advance(timedelta(days=400))
    found = _fields(await (await api.client.get("/.well-known/security.txt")).text())
    expires = datetime.strptime(found["Expires"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert expires > datetime.now(UTC) + timedelta(days=500)


async def test_security_txt_uses_the_operator_settings(aiohttp_client: Any, data_dir: Path) -> None:
    config = make_config(
        data_dir,
        security_contact="https://clinic.example/security",
        security_languages="en, de",
        security_expires_days=30,
        public_url="https://edge.clinic.example/",
    )
    site = open_site(config)
    try:
        client = await aiohttp_client(create_app(site))
        response = await client.get("/.well-known/security.txt")
        found = _fields(await response.text())
        _, document = await Api(client).call("GET", "/v2/openapi.json")
    finally:
        site.services.db.close()
    assert found["Contact"] == "https://clinic.example/security"
    assert found["Preferred-Languages"] == "en, de"
    assert found["Canonical"] == "https://edge.clinic.example/.well-known/security.txt"
    expires = datetime.strptime(found["Expires"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert expires <= datetime.now(UTC) + timedelta(days=30, minutes=1)
    assert document["servers"] == [{"url": "https://edge.clinic.example"}]


async def test_both_jwks_paths_publish_the_same_keys(api: Api) -> None:
    status_root, root = await api.call("GET", "/.well-known/jwks.json")
    status_v2, v2 = await api.call("GET", "/v2/.well-known/jwks.json")
    assert (status_root, status_v2) == (200, 200)
    assert root == v2
    assert root["keys"], root
    for key in root["keys"]:
        assert {key["kty"], key["crv"], key["alg"], key["use"]} == {"EC", "P-256", "ES256", "sig"}
        assert not {"d", "p", "q"} & set(key)  # public halves only


async def test_access_token_verifies_against_the_jwks(api: Api, staff_token: str) -> None:
    _, jwks = await api.call("GET", "/.well-known/jwks.json")
    kid = jwt.get_unverified_header(staff_token)["kid"]
    published = {key["kid"]: key for key in jwks["keys"]}
    assert kid in published
    key = jwt.PyJWK(published[kid])
    claims = jwt.decode(staff_token, key.key, algorithms=["ES256"], issuer="edge")
    assert claims["exp"] > datetime.now(UTC).timestamp()
    assert claims["sub"] and claims["sid"]


async def test_a_token_signed_by_another_key_is_refused(api: Api, staff_token: str) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    header = jwt.get_unverified_header(staff_token)
    claims = jwt.decode(staff_token, options={"verify_signature": False})
    forged = jwt.encode(claims, ec.generate_private_key(ec.SECP256R1()), "ES256", header)
    status, body = await api.call("GET", "/v2/orgs", forged)
    assert status == 401 and set(body) == {"message"}
    status, _ = await api.call("GET", "/v2/orgs", staff_token)
    assert status == 200


def test_server_releases_agree_with_the_root_changelog() -> None:
    """/v2/changelog and CHANGELOG.md tell the same release history, newest first."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "CHANGELOG.md").read_text()
    documented = re.findall(r"^## (\d+\.\d+\.\d+) \((\d{4}-\d\d-\d\d)\)", text, re.M)
    served = [(r.version, r.date) for r in releases.server_releases() if r.date]
    assert documented == served
    assert served[0][0] == BUILD_VERSION
    pyproject = (root / "pyproject.toml").read_text()
    assert f'\nversion = "{BUILD_VERSION}"\n' in pyproject


async def test_changelog_shows_every_note_of_changelog_md(api: Api) -> None:
    """The server part has one source: every bullet of CHANGELOG.md is on the page."""
    text = (Path(__file__).resolve().parents[2] / "CHANGELOG.md").read_text()
    page = await (await api.client.get("/v2/changelog")).text()
    notes = [n for r in releases.parse(text) for s in r.sections for n in s.notes]
    assert len(notes) >= 8
    for note in notes:
        assert html.escape(note).replace("`", "") in re.sub(r"</?code>", "", page), note
    assert "copy-before-migrate upgrades" in page  # a 0.1.0 note the old page lacked


def test_the_changelog_parser_reads_sections_and_continuations() -> None:
    text = (
        "# Changelog\n\n## Unreleased\n\n### Added\n- one\n  continued (#9)\n"
        "### Fixed\n- two `code`\n\n## 0.1.0 (2026-11-22)\n\n- plain\n"
    )
    parsed = releases.parse(text)
    assert [(r.version, r.date) for r in parsed] == [("Unreleased", None), ("0.1.0", "2026-11-22")]
    assert parsed[0].sections == (
        releases.Section("Added", ("one continued (#9)",)),
        releases.Section("Fixed", ("two `code`",)),
    )
    assert parsed[1].sections == (releases.Section(None, ("plain",)),)


def test_interface_history_is_newest_first_and_ends_at_2_3_18() -> None:
    versions = [tuple(map(int, r.version.split("."))) for r in INTERFACE_HISTORY]
    assert versions == sorted(versions, reverse=True)
    assert INTERFACE_HISTORY[0].version == INTERFACE_VERSION == "2.3.18"
