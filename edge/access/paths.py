"""What a caller may do to the data or files at one path of a group (docs/permissions.md).

Group access carries `data_paths` and `file_paths`: `{path: {can_read, can_write,
can_update, can_delete}}` (no `can_update` while the org or project uses the legacy data
and files permissions). The rules:

- a path grant covers the path and everything below it, matched on whole segments
  (`/a` covers `/a` and `/a/b`, not `/ab`);
- the longest matching path of an access object decides, in both directions: a longer
  path may take away what a shorter one gave, or give what it did not; the entry for
  `/` is the group-level grant;
- access the caller holds directly and through roles is merged: any grant counts;
- group admins (and admins of the group's project, and org admins) may do everything.

What each operation needs:
- read: `can_read`;
- create a path that does not exist (POST, or PUT of a new path): `can_write`;
- change an existing one (PUT over it, PATCH): `can_update`; under the legacy rule,
  `can_write`;
- delete: `can_delete`; a cascade needs it on every path below too;
- when the group's `require_delete_permission_to_put_data` is on, every PUT also needs
  `can_delete` (so POST can be granted without the power to overwrite).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from edge.kernel.errors import ValidationError

RIGHTS = ("read", "write", "update", "delete")
Paths = Mapping[str, Mapping[str, bool]]
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # control characters no path may hold


@dataclass(frozen=True)
class Rights:
    read: bool = False
    write: bool = False
    update: bool = False
    delete: bool = False

    def has(self, right: str) -> bool:
        return bool(getattr(self, right))

    def merge(self, other: Rights) -> Rights:
        return Rights(*(self.has(r) or other.has(r) for r in RIGHTS))


NONE = Rights()
ALL = Rights(True, True, True, True)


def grant_path(raw: str) -> str:
    """A grant's path spelled as the paths it is matched against: a leading '/', no
    trailing one (`secret/` is `/secret`). A trailing '/' kept would match no data path
    (they drop theirs), so a grant meant to take `/secret` away would take nothing."""
    path = raw if raw.startswith("/") else "/" + raw
    return path.rstrip("/") or "/"


def requested_grant_path(field: str, raw: str) -> str:
    """A grant path from a request, as `grant_path` spells it; a 400 naming it when no
    data or file path could ever be it (`//secret`, `/./secret`, `/x/../secret`,
    `/secret/.`): such a grant would match nothing, so one meant to take a path away
    would take nothing. Refused rather than respelled: the interface adds the leading
    '/' and nothing more, and a grant should say what it covers (docs/permissions.md)."""
    path = raw if raw.startswith("/") else "/" + raw
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]  # one, as data paths drop one
    problem = segment_problem(path) if path != "/" else None
    if problem is not None:
        raise ValidationError(field, f"'{raw}' is not a path any data or file can have: {problem}")
    return path


def segment_problem(path: str) -> str | None:
    """What makes a path (with its leading '/', not the root) one that no data entry or
    file can have, or None: an empty segment, a '.' or '..' segment (URLs resolve those
    before the server sees them), a control character, a lone surrogate."""
    for segment in path[1:].split("/"):
        if not segment:
            return f"'{path}' has an empty segment"
        if segment in (".", ".."):
            return "'.' and '..' are not path segments"
    if CONTROL.search(path):
        return "must not hold control characters"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate (not valid Unicode)"
    return None


def _spelled(paths: Paths) -> Paths:
    """One access object's grants with their paths as `grant_path` spells them (grants
    stored before it did may end in '/'); where two spellings meet, the first stays."""
    if all(p == "/" or (p.startswith("/") and not p.endswith("/")) for p in paths):
        return paths  # the usual case: nothing to respell
    out: dict[str, Mapping[str, bool]] = {}
    for raw, flags in paths.items():
        out.setdefault(grant_path(raw), flags)
    return out


def covers(grant: str, path: str) -> bool:
    """Whether a grant's path covers a path, on whole segments."""
    if grant == "/":
        return True
    return path == grant or path.startswith(grant + "/")


def _rights(flags: Mapping[str, bool], legacy: bool) -> Rights:
    write = bool(flags.get("can_write"))
    update = write if legacy else bool(flags.get("can_update"))
    return Rights(bool(flags.get("can_read")), write, update, bool(flags.get("can_delete")))


@dataclass(frozen=True)
class PathGrants:
    """A caller's data (or file) grants in one group: one `Paths` per access object."""

    grants: tuple[Paths, ...] = ()
    admin: bool = False
    legacy: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "grants", tuple(_spelled(paths) for paths in self.grants))

    def at(self, path: str) -> Rights:
        if self.admin:
            return ALL
        out = NONE
        for paths in self.grants:
            out = out.merge(self._one(paths, path))
        return out

    def _one(self, paths: Paths, path: str) -> Rights:
        matches = [grant for grant in paths if covers(grant, path)]
        if not matches:
            return NONE
        return _rights(paths[max(matches, key=len)], self.legacy)

    def whole_subtree(self, path: str, right: str) -> bool:
        """Whether `right` holds at the path and at every path below it (cascades)."""
        if self.admin:
            return True
        below = {g for paths in self.grants for g in paths if covers(path, g)}
        return all(self.at(p).has(right) for p in {path, *below})

    def rules(self, path: str, right: str) -> tuple[list[tuple[str, bool]], bool]:
        """How `right` varies below a path, for filtering a subtree in its query: the
        grant paths under it, longest first, each with whether the right holds there,
        and whether it holds at the path itself (the default for everything else)."""
        default = self.at(path).has(right)
        if self.admin:
            return [], True
        below = {g for paths in self.grants for g in paths if covers(path, g) and g != path}
        ordered = sorted(below, key=lambda g: (-len(g), g))
        return [(g, self.at(g).has(right)) for g in ordered], default


def needed(exists: bool, method: str, *, legacy: bool, delete_to_put: bool) -> tuple[str, ...]:
    """The rights a write needs (`method` is POST, PUT, PATCH or DELETE)."""
    if method == "DELETE":
        return ("delete",)
    if method == "PATCH":
        return ("write",) if legacy else ("update",)
    change = ("write",) if not exists or legacy else ("update",)
    if method == "PUT" and delete_to_put:
        return (*change, "delete")
    return change
