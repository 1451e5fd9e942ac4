"""The Data and Files pages of the console (part "store" of #35), in a real browser on the
real server: in `make test`, each kind of caller opens them once (smoke); in
`make test-long`, entries made, edited, saved over a conflict and deleted, files uploaded
in one request and in parts, a multipart upload resumed after a part failed, downloaded
byte for byte and deleted, each checked through the API; and what a caller may not do
neither offered nor, when forced by URL, done."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.console import PEOPLE, WAIT, Console, LiveServer
from tests.browser.store import (
    asks_before_closing,
    block,
    downloaded,
    downloads_into,
    open_folder,
    requested,
    throttle,
    tree_paths,
    unreached_by_tab,
    upload,
    upload_ends,
)
from tests.browser.world_store import FILES, Store, bulk_put, put_bytes, stock
from tests.files import md5, multipart_etag
from tests.world import World

# The console's bounds (api/static/console/js/pages/files_upload.js): over 8 MiB a file
# goes in parts of 8 MiB, so a file of 9 MiB is two parts.
MULTIPART_BYTES = PART_BYTES = 8 * 1024 * 1024
BIG = MULTIPART_BYTES + 1024 * 1024

# Who sees Data and Files, and what the group's tree shows them at the top.
SEES = {
    "org_admin": ["/notes", "/secret", "/sensors"],
    "staff_in_clinic": ["/notes", "/secret", "/sensors"],
    "project_admin": None,  # Apollo's admin: Ward is an org group, not theirs
    "group_admin": ["/notes", "/secret", "/sensors"],
    "member": ["/sensors"],  # a grant to read /sensors alone (world_store.py)
}
UNSEEN = ("staff", "plain")  # no organization, or no group access


@pytest.fixture(scope="module")
def store(live: LiveServer, world_template: World) -> Store:
    return stock(live, world_template)


@pytest.fixture
def fresh(console: Console) -> Iterator[Console]:
    yield console
    console.driver.execute_script("sessionStorage.clear()")


@pytest.mark.parametrize("who", list(SEES))
def test_each_caller_opens_data_and_files(console: Console, store: Store, who: str) -> None:
    console.signed_in(who)
    assert {"Data", "Files"} <= set(console.nav())
    console.visit("data")
    assert console.all("main table, main section.list")
    console.visit("files")
    assert console.all("main table, main section.list")
    top = SEES[who]
    if top is not None:
        console.visit("data", store.ward)
        assert tree_paths(console) == top
        console.visit("files", store.ward)
        assert console.find("#files-table").text
    assert console.violations() == [], who
    assert console.errors() == []


@pytest.mark.parametrize("who", UNSEEN)
def test_data_and_files_are_not_offered_without_group_access(
    console: Console, store: Store, who: str
) -> None:
    console.signed_in(who)
    assert not {"Data", "Files"} & set(console.nav())


@pytest.mark.long
@pytest.mark.parametrize(
    "page", [("data", "{ward}"), ("data", "{ward}", "entry", "sensors", "t1"), ("files", "{ward}")]
)
def test_every_control_is_reached_by_keyboard(
    console: Console, store: Store, page: tuple[str, ...]
) -> None:
    console.signed_in("org_admin")
    console.visit(*(part.format(ward=store.ward) for part in page))
    assert unreached_by_tab(console) == []


# -- the full matrix (make test-long) ------------------------------------------------------
def _entry(live: LiveServer, store: Store, path: str) -> dict[str, Any]:
    return live.call("GET", f"/v2/groups/{store.ward}/data{path}", store.admin_token)["data"]  # type: ignore[no-any-return]


def _value(console: Console, text: str) -> None:
    box = console.find("#entry-value")
    box.clear()
    box.send_keys(text)


@pytest.mark.long
@pytest.mark.parametrize("who", ["org_admin", "group_admin"])
def test_an_entry_is_made_changed_and_deleted(
    console: Console, live: LiveServer, store: Store, who: str
) -> None:
    path = f"/notes/by-{who}"
    console.signed_in(who)
    console.visit("data", store.ward)
    console.type("#create-entry input[name=entry_path]", path)
    console.type("#new-entry-value", '{"made": "here"}')
    console.after_page_shows(lambda: console.find("#create-entry button[type=submit]").click())
    assert console.find("#entry-page").get_attribute("data-revision") == "1"
    assert _entry(live, store, path)["value"] == {"made": "here"}

    _value(console, '{"made": "here", "changed": [1, 2]}')
    console.find("details.index summary").click()  # closed: the entry has no index field
    console.type("#index-unicode_2", "ward")
    console.type("#index-number_1", "7.5")
    console.after_page_shows(lambda: console.find("#entry-editor button[type=submit]").click())
    entry = _entry(live, store, path)
    assert entry["value"] == {"made": "here", "changed": [1, 2]} and entry["revision"] == 2
    assert (entry["unicode_2"], entry["number_1"]) == ("ward", 7.5)
    assert console.find("#entry-page").get_attribute("data-revision") == "2"
    assert console.violations() == [], who

    console.find("#delete-entry").click()
    assert console.find("#delete-entry").text == "Really delete?"
    console.after_page_shows(lambda: console.find("#delete-entry").click())
    assert console.find("main").get_attribute("data-page") == "data"
    assert live.status("GET", f"/v2/groups/{store.ward}/data{path}", store.admin_token) == 404


@pytest.mark.long
def test_creating_where_an_entry_is_shows_the_servers_409(
    console: Console, live: LiveServer, store: Store
) -> None:
    before = _entry(live, store, "/sensors/t1")
    console.signed_in("org_admin")
    console.visit("data", store.ward)
    console.type("#create-entry input[name=entry_path]", "sensors/t1")
    console.type("#new-entry-value", '{"over": "written"}')
    console.find("#create-entry button[type=submit]").click()
    alert = console.wait_for("#create-entry p[role=alert]:not(:empty)")
    assert alert.text == "path: an entry already exists at /sensors/t1 (PUT replaces it)"
    assert _entry(live, store, "/sensors/t1")["revision"] == before["revision"]


@pytest.mark.long
def test_a_save_behind_another_write_shows_theirs_and_overwrites_nothing(
    console: Console, live: LiveServer, store: Store
) -> None:
    path = "/sensors/t2"
    console.signed_in("org_admin")
    console.visit("data", store.ward, "entry", "sensors", "t2")
    read_at = _entry(live, store, path)["revision"]
    live.call("PUT", f"/v2/groups/{store.ward}/data{path}", store.admin_token, value={"theirs": 1})
    _value(console, '{"mine": 1}')
    console.find("#entry-editor button[type=submit]").click()
    conflict = console.wait_for("#conflict:not([hidden]) #their-value")
    assert conflict.text.replace(" ", "").replace("\n", "") == '{"theirs":1}'
    assert f"at revision {read_at + 1}, not {read_at}" in console.find("#conflict").text
    assert _entry(live, store, path)["value"] == {"theirs": 1}  # nothing overwritten
    assert console.violations() == []

    console.after_page_shows(lambda: console.find("#save-over").click())  # knowingly
    entry = _entry(live, store, path)
    assert (entry["value"], entry["revision"]) == ({"mine": 1}, read_at + 2)


@pytest.mark.long
def test_a_delete_behind_another_write_deletes_nothing_until_asked_again(
    console: Console, live: LiveServer, store: Store
) -> None:
    """Delete names the version the page read: an entry changed meanwhile is not deleted
    unseen; the person sees theirs and may delete it knowingly."""
    path = "/notes/to-delete"
    where = f"/v2/groups/{store.ward}/data{path}"
    live.call("PUT", where, store.admin_token, value={"v": "read"})
    console.signed_in("org_admin")
    console.visit("data", store.ward, "entry", "notes", "to-delete")
    live.call("PUT", where, store.admin_token, value={"v": "changed"})
    console.find("#delete-entry").click()
    console.find("#delete-entry").click()  # "Really delete?"
    theirs = console.wait_for("#conflict:not([hidden]) #their-value")
    assert '"changed"' in theirs.text
    assert _entry(live, store, path)["value"] == {"v": "changed"}  # nothing deleted
    assert console.find("#save-over").text == "Delete theirs too"
    console.after_page_shows(lambda: console.find("#save-over").click())  # knowingly
    assert live.status("GET", where, store.admin_token) == 404


@pytest.mark.long
def test_a_conflict_loads_their_version(console: Console, live: LiveServer, store: Store) -> None:
    console.signed_in("group_admin")
    console.visit("data", store.ward, "entry", "notes", "today")
    live.call(
        "PUT", f"/v2/groups/{store.ward}/data/notes/today", store.admin_token, value={"v": "new"}
    )
    _value(console, '{"v": "stale"}')
    console.find("#entry-editor button[type=submit]").click()
    console.wait_for("#conflict:not([hidden]) #load-theirs")
    console.after_page_shows(lambda: console.find("#load-theirs").click())
    assert '"new"' in console.find("#entry-value").get_attribute("value")
    assert _entry(live, store, "/notes/today")["value"] == {"v": "new"}


@pytest.mark.long
def test_a_value_that_is_not_json_is_not_sent(
    console: Console, live: LiveServer, store: Store
) -> None:
    console.signed_in("org_admin")
    console.visit("data", store.ward, "entry", "sensors", "t1")
    before = _entry(live, store, "/sensors/t1")
    _value(console, '{"celsius": 22,')
    assert console.find("#entry-json").text.startswith("Not JSON")
    console.find("#entry-editor button[type=submit]").click()
    alert = console.wait_for("#entry-editor p[role=alert]:not(:empty)")
    assert alert.text.startswith("The value is not JSON")
    assert _entry(live, store, "/sensors/t1")["revision"] == before["revision"]


@pytest.mark.long
def test_the_tree_opens_folders_lazily(console: Console, store: Store) -> None:
    console.signed_in("org_admin")
    console.visit("data", store.ward)
    assert "/sensors/attic" not in tree_paths(console)
    open_folder(console, "/sensors")
    assert {"/sensors/attic", "/sensors/t1", "/sensors/t2"} <= set(tree_paths(console))
    open_folder(console, "/sensors/attic")
    assert "/sensors/attic/t3" in tree_paths(console)
    assert console.violations() == []


@pytest.mark.long
def test_an_entry_whose_path_a_url_must_escape_opens_from_the_tree(
    console: Console, live: LiveServer, store: Store
) -> None:
    path = "/odd/a b#1%é?"
    live.call(
        "PUT", f"/v2/groups/{store.ward}/data{quote(path)}", store.admin_token, value={"odd": 1}
    )
    console.signed_in("org_admin")
    console.visit("data", store.ward)
    open_folder(console, "/odd")
    console.after_page_shows(lambda: console.find(f'li[data-path="{path}"] a.entry').click())
    assert console.find("#entry-page code").text == path
    assert '"odd": 1' in console.find("#entry-value").get_attribute("value")


@pytest.mark.long
def test_a_folder_of_more_than_a_page_shows_the_rest_on_more(
    console: Console, live: LiveServer, store: Store
) -> None:
    """The tree reads 100 paths a page: a folder of 130 entries takes two."""
    paths = [f"/many/e{n:03}" for n in range(130)]
    for chunk in (paths[:100], paths[100:]):
        bulk_put(live, store, chunk, 1)
    console.signed_in("org_admin")
    console.visit("data", store.ward)
    open_folder(console, "/many")
    assert [p for p in tree_paths(console) if p.startswith("/many/")] == paths[:100]
    console.find('li[data-path="/many"] li.more button').click()
    console.wait_for(f'li[data-path="{paths[-1]}"]')
    assert [p for p in tree_paths(console) if p.startswith("/many/")] == paths
    assert not console.all('li[data-path="/many"] li.more')


@pytest.mark.long
def test_a_folder_of_more_than_a_page_of_files_shows_the_rest_on_more(
    console: Console, live: LiveServer, store: Store
) -> None:
    """The files of a folder come 50 a page; its subfolders show once whatever the page."""
    names = [f"/pages/f{n:02}.txt" for n in range(55)] + ["/pages/sub/deep.txt"]
    for path in names:
        reply = live.call(
            "PUT",
            f"/v2/groups/{store.ward}/files{path}",
            store.admin_token,
            content_type="text/plain",
        )
        put_bytes(reply["url"], path.encode())
    console.signed_in("org_admin")
    console.visit("files", store.ward, "pages")
    assert len(console.all("#files-table tr[data-path]")) == 50
    console.find("#files-more").click()
    console.wait_for('#files-table tr[data-folder="/pages/sub"]')
    shown = [r.get_attribute("data-path") for r in console.all("#files-table tr[data-path]")]
    assert shown == names[:55]
    assert len(console.all('#files-table tr[data-folder="/pages/sub"]')) == 1
    assert not console.all("#files-more")


@pytest.mark.long
def test_a_reader_is_offered_no_write_and_a_forced_read_shows_the_refusal(
    console: Console, live: LiveServer, store: Store
) -> None:
    console.signed_in("member")
    console.visit("data", store.ward)
    assert not console.all("#create-entry")
    console.visit("data", store.ward, "entry", "sensors", "t1")
    assert console.find("#entry-value").get_attribute("readonly") is not None
    assert not console.all("#entry-editor button[type=submit], #delete-entry")
    member = live.token("member")
    assert live.status("DELETE", f"/v2/groups/{store.ward}/data/sensors/t1", member) == 403
    console.visit("data", store.ward, "entry", "secret", "code")  # by URL: the server says no
    assert console.find("main p.error").text.startswith("Not permitted")
    assert console.violations() == []


@pytest.mark.long
def test_a_small_file_is_uploaded_downloaded_and_deleted(
    fresh: Console, live: LiveServer, store: Store, tmp_path: Path
) -> None:
    console = fresh
    content = b"small file \x00\xff" * 100
    source = tmp_path / "small.bin"
    source.write_bytes(content)
    console.signed_in("org_admin")
    console.visit("files", store.ward, "scans")
    assert not console.find("#upload-progress").is_displayed()  # until an upload starts
    assert upload(console, source).startswith("Uploaded small.bin")
    assert console.find("#upload-progress").is_displayed()
    console.wait_for('#files-table tr[data-path="/scans/small.bin"]')
    info = _file(live, store, "/scans/small.bin")
    assert (info["size"], info["etag"]) == (len(content), md5(content))
    assert requested(console, "part_number=") == 0  # one request, no parts

    downloads_into(console, tmp_path / "got")
    console.find('tr[data-path="/scans/small.bin"] button.download').click()
    assert downloaded(console, tmp_path / "got" / "small.bin") == content

    row = 'tr[data-path="/scans/small.bin"] button.delete'
    console.find(row).click()
    console.after_page_shows(lambda: console.find(row).click())
    assert (
        live.status("GET", f"/v2/groups/{store.ward}/files/scans/small.bin", store.admin_token)
        == 404
    )
    assert not console.all('tr[data-path="/scans/small.bin"]')


@pytest.mark.long
def test_a_big_file_goes_in_parts_and_comes_back_whole(
    fresh: Console, live: LiveServer, store: Store, tmp_path: Path
) -> None:
    console = fresh
    content = os.urandom(BIG)
    source = tmp_path / "big.bin"
    source.write_bytes(content)
    console.signed_in("org_admin")
    console.visit("files", store.ward)
    assert upload(console, source) == "Uploaded big.bin (9.0 MiB) in 2 parts"
    assert console.find("#upload-progress").get_attribute("value") == "1"
    info = _file(live, store, "/big.bin")
    assert (info["size"], info["etag"]) == (BIG, multipart_etag(_parts(content)))
    assert requested(console, "part_number=1") == requested(console, "part_number=2") == 1
    downloads_into(console, tmp_path / "got")
    console.wait_for('tr[data-path="/big.bin"] button.download').click()
    assert downloaded(console, tmp_path / "got" / "big.bin") == content


@pytest.mark.long
def test_an_upload_resumes_from_the_part_that_failed(
    fresh: Console, live: LiveServer, store: Store, tmp_path: Path
) -> None:
    console = fresh
    content = os.urandom(BIG)
    source = tmp_path / "resumed.bin"
    source.write_bytes(content)
    console.signed_in("group_admin")
    console.visit("files", store.ward, "scans")
    block(console, "*part_number=2*")
    try:
        failed = upload(console, source)
    finally:
        block(console)
    assert failed.startswith("part 2 of 2 failed: the connection dropped")
    assert console.find("#upload-resume").is_displayed()
    kept = console.driver.execute_script(
        "return Object.values(sessionStorage).map(JSON.parse)[0].etags"
    )
    assert list(kept) == ["1"]  # part 1 is done and remembered
    assert (
        live.status("GET", f"/v2/groups/{store.ward}/files/scans/resumed.bin", store.admin_token)
        == 404
    )

    console.find("#upload-resume").click()
    assert upload_ends(console) == "Uploaded resumed.bin (9.0 MiB) in 2 parts"
    assert requested(console, "part_number=1") == 1  # not sent again
    info = _file(live, store, "/scans/resumed.bin")
    assert (info["size"], info["etag"]) == (BIG, multipart_etag(_parts(content)))
    assert console.driver.execute_script("return sessionStorage.length") == 0
    url = live.call(
        "GET", f"/v2/groups/{store.ward}/files/scans/resumed.bin?url_only=true", store.admin_token
    )["url"]
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.read() == content


@pytest.mark.long
def test_an_upload_goes_on_after_the_page_was_lost(
    fresh: Console, live: LiveServer, store: Store, tmp_path: Path
) -> None:
    """The connection dropped and the page with it: signed in again in the same tab, the
    person chooses the same file and only the missing part is sent."""
    console = fresh
    content = os.urandom(BIG)
    source = tmp_path / "lost.bin"
    source.write_bytes(content)
    console.signed_in("org_admin")
    console.visit("files", store.ward)
    block(console, "*part_number=2*")
    try:
        assert upload(console, source).startswith("part 2 of 2 failed")
    finally:
        block(console)
    console.signed_in("org_admin")  # a new page: the token is gone, sessionStorage is not
    console.visit("files", store.ward)
    assert upload(console, source) == "Uploaded lost.bin (9.0 MiB) in 2 parts"
    assert (requested(console, "part_number=1"), requested(console, "part_number=2")) == (0, 1)
    info = _file(live, store, "/lost.bin")
    assert (info["size"], info["etag"]) == (BIG, multipart_etag(_parts(content)))


@pytest.mark.long
def test_leaving_the_page_stops_its_upload_at_once(
    fresh: Console, live: LiveServer, store: Store, tmp_path: Path
) -> None:
    """While an upload runs, closing the tab asks first; opening another page stops it: its
    request is aborted, so the server drops the part it was filling (at 256 KiB/s the part
    would take 32 s more), nothing is stored, and the tab no longer asks before closing."""
    console = fresh
    source = tmp_path / "left.bin"
    source.write_bytes(os.urandom(BIG))
    console.signed_in("org_admin")
    console.visit("files", store.ward)
    arriving = live.site.services.blobs.tmp
    assert not asks_before_closing(console)
    throttle(console, 256 * 1024)
    try:
        console.find("#upload-file").send_keys(str(source))
        console.find("#upload-form button[type=submit]").click()
        WebDriverWait(console.driver, WAIT).until(lambda d: list(arriving.iterdir()))
        assert asks_before_closing(console)
        console.visit("overview")
        WebDriverWait(console.driver, 10).until(lambda d: not list(arriving.iterdir()))
    finally:
        throttle(console, None)
    assert not asks_before_closing(console)
    where = f"/v2/groups/{store.ward}/files/left.bin?info_only=true"
    assert live.status("GET", where, store.admin_token) == 404


@pytest.mark.long
def test_an_upload_left_at_sign_out_is_not_resumed_by_the_next_person(
    fresh: Console, live: LiveServer, store: Store, tmp_path: Path, world_template: World
) -> None:
    """The org admin's upload fails at its second part and they sign out; the group admin
    signs in at the same tab and uploads a file of the same name, size and date: theirs
    goes whole, in two parts of their own, not onto the first person's upload."""
    console = fresh
    theirs, mine = os.urandom(BIG), os.urandom(BIG)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "handover.bin", tmp_path / "b" / "handover.bin"
    first.write_bytes(theirs)
    second.write_bytes(mine)
    os.utime(second, ns=(os.stat(first).st_atime_ns, os.stat(first).st_mtime_ns))
    console.signed_in("org_admin")
    console.visit("files", store.ward)
    block(console, "*part_number=2*")
    try:
        assert upload(console, first).startswith("part 2 of 2 failed")
    finally:
        block(console)
    kept = console.driver.execute_script("return Object.keys(sessionStorage)")
    assert len(kept) == 1 and kept[0].startswith(f"edge-upload:{world_template.tenant.admin_id}:")

    console.find("#sign-out").click()
    console.wait_page("sign-in")
    assert console.driver.execute_script("return sessionStorage.length") == 0
    console.driver.execute_script("performance.clearResourceTimings()")  # count B's alone
    console.enter(*PEOPLE["group_admin"])  # the address still names Ward's files
    console.wait_page("files")
    assert upload(console, second) == "Uploaded handover.bin (9.0 MiB) in 2 parts"
    assert (requested(console, "part_number=1"), requested(console, "part_number=2")) == (1, 1)
    info = _file(live, store, "/handover.bin")
    assert (info["size"], info["etag"]) == (BIG, multipart_etag(_parts(mine)))


@pytest.mark.long
@pytest.mark.parametrize("page", ["data", "files"])
def test_dot_segments_in_the_address_send_no_request(
    console: Console, live: LiveServer, store: Store, world_template: World, page: str
) -> None:
    """`#/data/<Ward>/entry/../../<Lab>/data/x` would read (and delete) Lab's entry on a
    page naming Ward, as the browser resolves the dots in the request's URL: such an
    address is refused with a message and nothing is asked of the server."""
    lab = world_template.project_group_id
    console.signed_in("org_admin")
    where = {
        "data": ["entry", "..", "..", lab, "data", "x"],
        "files": ["..", "..", lab, "files", "in"],
    }
    for args in ([store.ward, *where[page]], [".", "x"], [store.ward, "%2E%2E", lab]):
        console.visit(page, *args)
        assert "names no group, folder or entry" in console.find("main p.error").text, args
        assert not console.all("#entry-page, #files-page, #upload-form")
    assert requested(console, lab) == 0


@pytest.mark.long
def test_a_new_entry_at_a_path_with_dots_is_refused(console: Console, store: Store) -> None:
    console.signed_in("org_admin")
    console.visit("data", store.ward)
    console.type("#create-entry input[name=entry_path]", "/sensors/../../dotted")
    console.find("#create-entry button[type=submit]").click()
    assert "no part of it may be" in console.wait_for("#create-entry p.error:not(:empty)").text
    assert requested(console, "dotted") == 0


@pytest.mark.long
def test_a_reader_of_files_may_download_only(
    console: Console, live: LiveServer, store: Store, tmp_path: Path
) -> None:
    console.signed_in("member")
    console.visit("files", store.ward, "scans")
    assert not console.all("#upload-form")
    row = 'tr[data-path="/scans/intake.txt"]'
    assert console.all(f"{row} button.download") and not console.all(f"{row} button.delete")
    downloads_into(console, tmp_path)
    console.find(f"{row} button.download").click()
    assert downloaded(console, tmp_path / "intake.txt") == FILES["/scans/intake.txt"]
    assert console.violations() == []
    console.visit("files", store.ward)  # the server lists only what the member may read
    shown = [
        r.get_attribute("data-path") or r.get_attribute("data-folder")
        for r in console.all("#files-table tbody tr")
    ]
    assert shown == ["/scans"]  # not /readme.txt
    member = live.token("member")
    assert live.status("DELETE", f"/v2/groups/{store.ward}/files/scans/intake.txt", member) == 403


@pytest.mark.long
def test_a_group_out_of_reach_is_the_servers_404(
    console: Console, store: Store, world_template: World
) -> None:
    """A group admin of Ward opening Lab (Apollo's group) by URL: the server's 404 shown."""
    console.signed_in("group_admin")
    console.visit("data", world_template.project_group_id)
    assert console.find("main p.error").text == "Group not found"
    console.visit("files", world_template.project_group_id)
    assert console.find("main p.error").text == "Group not found"


def _file(live: LiveServer, store: Store, path: str) -> dict[str, Any]:
    where = f"/v2/groups/{store.ward}/files{path}?info_only=true"
    return live.call("GET", where, store.admin_token)["file"]  # type: ignore[no-any-return]


def _parts(content: bytes) -> list[bytes]:
    return [content[i : i + PART_BYTES] for i in range(0, len(content), PART_BYTES)]
