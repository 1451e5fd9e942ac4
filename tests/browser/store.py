"""What a person does on the Data and Files pages (part "store" of #35), for the tests of
tests/browser/test_console_store.py: open a folder of the data tree, choose a file to
upload and wait for the upload's end, make the browser drop the requests of one part
(Chrome's own request blocking, through the DevTools protocol), and receive downloads in
a folder."""

from __future__ import annotations

import json
from pathlib import Path

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
