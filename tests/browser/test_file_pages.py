"""A file uploaded as a page, opened in a real browser from its presigned URL: it displays,
but its scripts do not run on the server's origin (api/downloads.py sandboxes downloads)."""

from __future__ import annotations

import pytest

from tests.browser.test_docs_page import render
from tests.files import relative
from tests.world import World

PAGE = b"""<!doctype html><html><body><p id="shown">uploaded page</p>
<script>document.body.setAttribute("data-origin", String(window.origin))</script>
</body></html>"""


pytestmark = pytest.mark.world("content")


async def test_an_uploaded_page_shows_but_runs_no_script_on_the_origin(world: World) -> None:
    status, _ = await world.upload("file_editor", "page.html", PAGE, content_type="text/html")
    assert status == 200
    status, body = await world.files("file_reader", "GET", "page.html", params={"url_only": "1"})
    assert status == 200 and world.api is not None
    dom = await render(str(world.api.client.make_url(relative(body["url"]))))
    assert 'id="shown"' in dom
    assert "data-origin=" not in dom, dom  # the attribute the script would have set
