"""edge/ops/releases.py: the releases parsed from a changelog (versions, dates, sections,
bullets and their continuation lines), this server's from CHANGELOG.md, and the interface's
history newest first."""

from __future__ import annotations

from edge.ops import releases
from edge.ops.releases import Release, Section

TEXT = """# Changelog

Some words before the first release are not a release.

## Unreleased

### Added
- A new thing,
  told over two lines.
* A starred bullet.

### Fixed

## 1.2.0 (2026-11-01)
- A bullet before any section.

### Changed
- Something else.
"""


def test_releases_sections_and_bullets_are_parsed() -> None:
    assert releases.parse(TEXT) == (
        Release(
            "Unreleased",
            None,
            (Section("Added", ("A new thing, told over two lines.", "A starred bullet.")),),
        ),
        Release(
            "1.2.0",
            "2026-11-01",
            (
                Section(None, ("A bullet before any section.",)),
                Section("Changed", ("Something else.",)),
            ),
        ),
    )


def test_a_text_without_releases_has_none() -> None:
    assert releases.parse("# Changelog\n\n- a stray bullet\n") == ()


def test_this_servers_releases_come_from_its_changelog() -> None:
    found = releases.server_releases()
    assert found and found[0].version == "Unreleased"
    assert releases.changelog_path().name == "CHANGELOG.md"
    dated = [r for r in found if r.date is not None]
    assert dated and all(len(r.date or "") == 10 for r in dated)


def test_the_interface_history_is_newest_first() -> None:
    versions = [r.version for r in releases.INTERFACE_HISTORY]
    assert versions[0] == "2.3.18"
    numbers = [tuple(int(p) for p in v.split(".")) for v in versions]
    assert numbers == sorted(numbers, reverse=True)
