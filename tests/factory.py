"""The one factory of test worlds: the data folder, the site, the server, its orgs and callers.

Modelled on pocketbase's `tests.NewTestApp` and datasette's `make_app_client`: every test
asks for what it needs and gets it from here, nowhere else.

Layers, each built once per session in a data folder of its own on a copy of the one
before, so that a test pays only for copying the folder it starts from (see `data_dir`):

- the template: keys, the migrated database, the first staff account (every test);
- Clinic, with its org admin (`tenant`);
- the orgs: Other too, with its org admin (`other_tenant`);
- the cast: the world of tests/world.py on those orgs (`world`);
- the content: the cast with the holders of files and data, for a test marked
  `@pytest.mark.world("content")` (the `world` fixture then holds that part too).

A test gets the smallest layer holding the fixtures it asks for; nothing mutable is
shared between tests. Settings are a parameter of the factory:
`@pytest.mark.world(files_min_part_bytes=PART)` on a test, or in a module's
`pytestmark`, sets them for its server (the mark nearest the test wins, setting by
setting). A value known only when the test runs (a port, an inbox) is a callable given
the test's request: `smtp_port=from_fixture("inbox", "port")`.

Lower-level entries of the same factory: `new_site(folder, **settings)` opens a Site (a
database and the services, no HTTP) on any folder, for the tests of storage, services
and of opening a site itself; `settings_of(request)` gives a test's settings for a server
it starts itself (the broker's); tests/rows.py arranges rows straight in storage.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from edge.app import Site, create_app, open_site
from edge.kernel.config import Config
from tests.conftest import Api, make_config
from tests.tenants import Tenant
from tests.world import World, build_clinic, with_cast, with_content, with_other

Layer = Callable[[World], Awaitable[World]]


# -- the lower-level entries ------------------------------------------------------------------
def new_site(folder: Path, **settings: Any) -> Site:
    """A site (database and services, no HTTP) on `folder` with these settings; a folder
    that does not exist yet is made, as `edge serve` makes it."""
    return open_site(make_config(folder, **settings))


def settings_of(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings the `world` marks of a test name (the nearest mark wins), callables
    called with the test's request."""
    named: dict[str, Any] = {}
    for mark in reversed(list(request.node.iter_markers("world"))):  # farthest first
        named.update(mark.kwargs)
    return {key: value(request) if callable(value) else value for key, value in named.items()}


def from_fixture(name: str, attribute: str) -> Callable[[pytest.FixtureRequest], Any]:
    """A setting taken from another fixture of the test when it runs (an inbox's port)."""
    return lambda request: getattr(request.getfixturevalue(name), attribute)


PARTS = {"content"}  # the parts of the world a mark may name


def _parts(request: pytest.FixtureRequest) -> set[str]:
    named = {part for mark in request.node.iter_markers("world") for part in mark.args}
    assert named <= PARTS, f"no such part of the world: {sorted(named - PARTS)}"
    return named


# -- the layers, once per session ---------------------------------------------------------------
def _built_in(source: Path, folder: Path, make: Callable[[Site], Awaitable[World]]) -> World:
    """A world made by `make` in `folder`, a copy of `source`, once."""
    shutil.copytree(source, folder)
    site = new_site(folder)
    try:  # in a thread of its own: no event loop may be running in this one
        with ThreadPoolExecutor(1) as pool:
            built = pool.submit(asyncio.run, make(site)).result()  # type: ignore[arg-type]
    finally:
        site.services.db.close()
    built.folder = folder
    return built


def _layer_on(below: World, folder: Path, add: Layer) -> World:
    return _built_in(below.folder, folder, lambda site: add(below.bound(site, None)))


@pytest.fixture(scope="session")
def template_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder prepared once: keys, migrated database, first staff account."""
    folder = tmp_path_factory.mktemp("template") / "data"
    new_site(folder).services.db.close()
    return folder


@pytest.fixture(scope="session")
def clinic_template(template_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> World:
    """Clinic with its admin, and nothing else."""
    return _built_in(template_dir, tmp_path_factory.mktemp("clinic") / "data", build_clinic)


@pytest.fixture(scope="session")
def orgs_template(clinic_template: World, tmp_path_factory: pytest.TempPathFactory) -> World:
    """Clinic and Other with their admins, and nothing else."""
    return _layer_on(clinic_template, tmp_path_factory.mktemp("orgs") / "data", with_other)


@pytest.fixture(scope="session")
def world_template(orgs_template: World, tmp_path_factory: pytest.TempPathFactory) -> World:
    """The cast (tests/world.py) on the orgs."""
    return _layer_on(orgs_template, tmp_path_factory.mktemp("world") / "data", with_cast)


@pytest.fixture(scope="session")
def content_world_template(
    world_template: World, tmp_path_factory: pytest.TempPathFactory
) -> World:
    """The cast with its content part (the holders of files and data)."""
    folder = tmp_path_factory.mktemp("content-world") / "data"
    return _layer_on(world_template, folder, with_content)


def _template(request: pytest.FixtureRequest) -> World | None:
    """The layer a test starts from: the richest one its fixtures ask for."""
    names = request.fixturenames
    if "world_template" in names and "content" in _parts(request):
        return request.getfixturevalue("content_world_template")  # type: ignore[no-any-return]
    for name in ("world_template", "orgs_template", "clinic_template"):
        if name in names:
            return request.getfixturevalue(name)  # type: ignore[no-any-return]
    return None


# -- a test's own copy ------------------------------------------------------------------------
@pytest.fixture
def data_dir(template_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh copy of the layer the test starts from."""
    layer = _template(request)
    target = tmp_path / "data"
    shutil.copytree(template_dir if layer is None else layer.folder, target)
    return target


@pytest.fixture
def config(data_dir: Path, request: pytest.FixtureRequest) -> Config:
    return make_config(data_dir, **settings_of(request))


@pytest.fixture
def site(config: Config) -> Iterator[Site]:
    opened = open_site(config)
    yield opened
    opened.services.db.close()  # idempotent: the app's cleanup may have closed it already


@pytest.fixture
def app(site: Site) -> web.Application:
    return create_app(site)


@pytest.fixture
async def client(aiohttp_client: Any, app: web.Application) -> TestClient:  # type: ignore[type-arg]
    """The test's server on a free loopback port, and a client of it."""
    return await aiohttp_client(app)


@pytest.fixture
def api(client: TestClient) -> Api:  # type: ignore[type-arg]
    return Api(client)


@pytest.fixture
def base_url(client: TestClient) -> str:  # type: ignore[type-arg]
    """The URL of the test's server, for a client of its own (the SDK, a CLI)."""
    return str(client.make_url("")).rstrip("/")


@pytest.fixture
async def staff_token(api: Api) -> str:
    return await api.token()


@pytest.fixture
def tenant(clinic_template: World, site: Site, api: Api) -> Tenant:
    """Clinic, with its org admin (alone unless the test asks for more)."""
    return clinic_template.bound(site, api).tenant


@pytest.fixture
def other_tenant(orgs_template: World, site: Site, api: Api) -> Tenant:
    """Other, the second organization, with its org admin."""
    return orgs_template.bound(site, api).other


@pytest.fixture
def world(world_template: World, request: pytest.FixtureRequest, site: Site, api: Api) -> World:
    """The world on this test's copy of its data folder (with its content part when the
    test is marked so)."""
    layer = _template(request)
    assert layer is not None
    return layer.bound(site, api)
