"""What a person does on the Data and Files pages (part "store" of #35), for the tests of
tests/browser/test_console_store.py: open a folder of the data tree, choose a file to
upload and wait for the upload's end, make the browser drop the requests of one part
(Chrome's own request blocking, through the DevTools protocol) or slow its uploads, and
receive downloads in a folder."""

from __future__ import annotations

import json
from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.console import WAIT, Console


def open_folder(console: Console, path: str) -> None:
    """Open a folder of the data tree (its button), and wait for its first page."""
    item = f"#data-tree li[data-path={json.dumps(path)}]"
    console.find(f"{item} > button.folder").click()
    console.wait_for(f'{item}[data-loaded="1"]')


def tree_paths(console: Console) -> list[str]:
    """The paths the data tree shows now, in order."""
    return [li.get_attribute("data-path") or "" for li in console.all("#data-tree li[data-path]")]


def upload(console: Console, file: Path) -> str:
    """Choose `file` in the upload form and send it; the status or error once it ends
    (the error when a part failed)."""
    console.find("#upload-file").send_keys(str(file))
    console.find("#upload-form button[type=submit]").click()
    return upload_ends(console)


def upload_ends(console: Console) -> str:
    WebDriverWait(console.driver, WAIT).until(
        lambda d: (
            console.find("#upload-error").text
            or console.find("#upload-status").text.startswith("Uploaded")
        )
    )
    return str(console.find("#upload-error").text or console.find("#upload-status").text)


def block(console: Console, *patterns: str) -> None:
    """Make the browser fail every request whose URL matches one of `patterns` (none:
    let them all through again), as a dropped connection would."""
    console.driver.execute_cdp_cmd("Network.enable", {})
    console.driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": list(patterns)})


def throttle(console: Console, upload_bytes_per_second: int | None) -> None:
    """Make the browser send request bodies at most this fast (None: as fast as it can),
    as a slow link would (Chrome's own network emulation, through the DevTools protocol)."""
    console.driver.execute_cdp_cmd("Network.enable", {})
    console.driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": 0,
            "downloadThroughput": -1,
            "uploadThroughput": upload_bytes_per_second or -1,
        },
    )


def asks_before_closing(console: Console) -> bool:
    """Whether closing or reloading the tab now would ask first: a `beforeunload` the page
    cancels (the event the browser sends, made here so no dialog has to be answered)."""
    return bool(
        console.driver.execute_script(
            "const e = new Event('beforeunload', {cancelable: true});"
            " window.dispatchEvent(e); return e.defaultPrevented"
        )
    )


def requested(console: Console, fragment: str) -> int:
    """How many requests of this page's life had `fragment` in their URL."""
    return int(
        console.driver.execute_script(
            "return performance.getEntriesByType('resource')"
            ".filter(e => e.name.includes(arguments[0])).length",
            fragment,
        )
    )


def downloads_into(console: Console, folder: Path) -> None:
    console.driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)}
    )


def downloaded(console: Console, file: Path) -> bytes:
    """The bytes of a finished download (Chrome writes a .crdownload until it ends)."""
    WebDriverWait(console.driver, WAIT).until(lambda d: file.exists())
    return file.read_bytes()


def upload_shot(console: Console, target: Path, group_id: str, scratch: Path) -> Path:
    """The picture `files-upload`: a file of two parts uploaded, its progress shown."""
    source = scratch / "scan-archive.bin"
    source.write_bytes(bytes(9 * 1024 * 1024))
    console.signed_in("org_admin")
    console.visit("files", group_id)
    upload(console, source)
    console.wait_for('#files-table tr[data-path="/scan-archive.bin"]')
    path = target / "files-upload.png"
    console.driver.save_screenshot(str(path))
    return path


def unreached_by_tab(console: Console) -> list[str]:
    """The page's controls that Tab, pressed from the top, never reaches (their HTML)."""
    controls = console.driver.execute_script(
        "return [...document.querySelectorAll('main a[href], main button, main input,"
        " main textarea, main select, main summary')]"
        ".filter(e => !e.disabled && e.checkVisibility())"
    )
    console.driver.execute_script("document.activeElement.blur(); window.focus()")
    reached = []
    for _ in range(len(controls) + 20):
        ActionChains(console.driver).send_keys(Keys.TAB).perform()  # a file input takes no keys
        reached.append(console.driver.switch_to.active_element)
    return [str(c.get_attribute("outerHTML"))[:80] for c in controls if c not in reached]
