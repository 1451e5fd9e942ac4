"""The history shown at /v2/changelog: the interface's versions and this server's releases.

The interface history is the specification's (2.0.1 ... 2.3.18) and lives here. This
server's releases have one source, the root CHANGELOG.md: it is read and parsed at run
time, from the source tree (`make run`) or from the executable, which packs it
(packaging/edge.spec), so the page never drifts from the file.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

CHANGELOG = "CHANGELOG.md"
_RELEASE = re.compile(r"^## (?P<version>\S+)(?: \((?P<date>\d{4}-\d\d-\d\d)\))?\s*$")
_SECTION = re.compile(r"^### (?P<title>.+?)\s*$")
_BULLET = re.compile(r"^[-*] (?P<text>.*)$")


@dataclass(frozen=True)
class Section:
    title: str | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Release:
    version: str
    date: str | None
    sections: tuple[Section, ...]


def _interface(version: str, *notes: str) -> Release:
    return Release(version, None, (Section(None, notes),))


INTERFACE_HISTORY: tuple[Release, ...] = (
    _interface("2.3.18", "The newest interface version; this server implements it."),
    _interface(
        "2.2.39",
        "POST and PUT /v2/account/sms/verification were removed; SMS MFA is "
        "enabled in two phases through PUT /v2/auth/mfa/sms.",
    ),
    _interface("2.2.0", "Roles were added.", "Profile pictures were added."),
    _interface("2.1.9", "List and data limits default to 100 and allow at most 1000."),
    _interface(
        "2.1.0",
        "Bulk data field results_by_path was renamed data_by_path.",
        "Index filter operators gt/le were replaced by gte/lte.",
    ),
    _interface("2.0.2", "File redirects answer 308 instead of 302."),
    _interface("2.0.1", "Schema validation failures answer 406 instead of 422."),
)


def changelog_path() -> Path:
    """CHANGELOG.md inside the executable (PyInstaller unpacks data files to _MEIPASS),
    else at the root of the source tree."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle is not None:
        return Path(bundle) / CHANGELOG
    return Path(__file__).resolve().parents[2] / CHANGELOG


@functools.cache
def server_releases() -> tuple[Release, ...]:
    """This server's releases from CHANGELOG.md, newest first (an `Unreleased` section
    included); empty when the file is not part of this installation."""
    try:
        text = changelog_path().read_text("utf-8")
    except OSError:
        return ()
    return parse(text)


def parse(text: str) -> tuple[Release, ...]:
    """Releases (`## <version> (<date>)`), their sections (`### Added`) and bullets, a
    bullet's continuation lines joined to it."""
    releases: list[tuple[str, str | None, list[tuple[str | None, list[str]]]]] = []
    for line in text.splitlines():
        if found := _RELEASE.match(line):
            releases.append((found["version"], found["date"], []))
        elif releases and (found := _SECTION.match(line)):
            releases[-1][2].append((found["title"], []))
        elif releases and (found := _BULLET.match(line)):
            sections = releases[-1][2]
            if not sections:
                sections.append((None, []))
            sections[-1][1].append(found["text"].strip())
        elif releases and line.startswith("  ") and releases[-1][2] and releases[-1][2][-1][1]:
            notes = releases[-1][2][-1][1]
            notes[-1] = f"{notes[-1]} {line.strip()}"
    return tuple(
        Release(v, d, tuple(Section(t, tuple(n)) for t, n in sections if n))
        for v, d, sections in releases
    )
