"""The README and docs/ as tests: every relative link leads somewhere (a file, and the
heading its `#anchor` names), and the README's data-folder table names everything the code
puts in the data folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edge.auth import keys
from storage import layout

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)


def _prose(page: Path) -> str:
    """The page without its code: a `[x](y)` in a code block or span is not a link."""
    return _CODE.sub("", _FENCE.sub("", page.read_text("utf-8")))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(h) for h in _HEADING.findall(_FENCE.sub("", page.read_text("utf-8")))}


def _relative_links(page: Path) -> list[str]:
    """Links to the repository's own files: not to a site (`https:`, `mailto:`) nor to a
    route of the server (`/v2/...`)."""
    return [
        target
        for target in _LINK.findall(_prose(page))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("/")
    ]


def _broken(page: Path, root: Path = REPO) -> list[str]:
    broken = []
    for target in _relative_links(page):
        path, _, anchor = target.partition("#")
        found = (page.parent / path).resolve() if path else page
        if root not in found.parents:
            broken.append(f"{target}: outside the repository")
        elif not found.exists():
            broken.append(f"{target}: no such file")
        elif anchor and found.suffix == ".md" and anchor not in _anchors(found):
            broken.append(f"{target}: no heading #{anchor} in {found.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = _broken(page)
    assert not broken, f"{page.relative_to(REPO)}:\n" + "\n".join(broken)


def test_the_link_check_finds_what_it_checks(tmp_path: Path) -> None:
    """Links are found (not skipped as code), anchors slugged as GitHub does, and each way
    a link can break is caught."""
    readme = _relative_links(REPO / "README.md")
    assert "docs/operating.md" in readme and len(readme) > 20
    assert _slug("`edge check`: what it checks") == "edge-check-what-it-checks"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# B\n\n## Ports and the LAN\n", "utf-8")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](docs/b.md#ports-and-the-lan) [gone](docs/c.md) [miss](docs/b.md#nowhere)"
        " [here](#a) [up](../x.md) [web](https://example.com) [route](/v2/docs)"
        " `[code](nothing.md)`\n\n# A\n\n```\n[fenced](nothing.md)\n```\n",
        "utf-8",
    )
    assert _broken(page, tmp_path) == [
        "docs/c.md: no such file",
        "docs/b.md#nowhere: no heading #nowhere in b.md",
        "../x.md: outside the repository",
    ]


def _data_folder_table() -> str:
    text = (REPO / "README.md").read_text("utf-8")
    section = text.split("## The data folder", 1)[1].split("\n## ", 1)[0]
    return "\n".join(line for line in section.splitlines() if line.startswith("|"))


def _layout_names() -> list[str]:
    """Every file and folder name storage/layout.py declares (its `*_FILE`, `*_DIR`)."""
    return [
        value
        for name, value in vars(layout).items()
        if re.fullmatch(r"[A-Z_]+_(FILE|DIR)", name) and isinstance(value, str)
    ]


# Names inside keys/ and ca/ (storage/layout.py), and the signing keys' common prefix.
KEY_NAMES = [
    keys.SIGNING_PREFIX,
    layout.HMAC_KEY_FILE,
    layout.MFA_KEY_FILE,
    layout.FILES_URL_KEY_FILE,
    layout.DATA_SIGNING_KEY_FILE,
    layout.CA_KEY_FILE,
    layout.CA_CERT_FILE,
    layout.SERVER_KEY_FILE,
    layout.SERVER_CERT_FILE,
]


def test_the_readme_names_everything_in_the_data_folder() -> None:
    table = _data_folder_table()
    rows = re.findall(r"^\| `([^`]+)` \|", table, re.M)
    assert len(rows) == len(set(rows)), f"a path listed twice: {rows}"
    inside = set(KEY_NAMES)  # named inside the keys/ and ca/ rows, checked below
    top = [name for name in _layout_names() if name not in inside]
    missing = [name for name in top if name not in rows and f"{name}/" not in rows]
    assert not missing, f"not in README's data-folder table: {missing}"
    unnamed = [name for name in KEY_NAMES if f"`{name}" not in table]
    assert not unnamed, f"not named in README's data-folder table: {unnamed}"
