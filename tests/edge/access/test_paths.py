"""Path grants: whole segments, the longest path decides both ways, grants merge across
access objects, admins may do everything, and what each write needs."""

from __future__ import annotations

import pytest

from edge.access.paths import PathGrants, covers, needed

R = {"can_read": True}
RW = {"can_read": True, "can_write": True}
NOTHING: dict[str, bool] = {}


@pytest.mark.parametrize(
    ("grant", "path", "covered"),
    [
        ("/", "/x", True),
        ("/a", "/a", True),
        ("/a", "/a/b", True),
        ("/a", "/ab", False),
        ("/a/b", "/a", False),
    ],
)
def test_grants_cover_whole_segments(grant: str, path: str, covered: bool) -> None:
    assert covers(grant, path) is covered


def test_longest_path_decides_in_both_directions() -> None:
    grants = PathGrants(({"/": R, "/secret": NOTHING, "/secret/open": R},))
    assert grants.at("/x").read and not grants.at("/secret").read
    assert not grants.at("/secret/y").read and grants.at("/secret/open/z").read
    assert not PathGrants(({"/a": R},)).at("/b").read  # nothing matches: nothing granted


def test_grants_merge_across_access_objects() -> None:
    grants = PathGrants(({"/": R, "/w": NOTHING}, {"/w": RW}))
    assert grants.at("/w/x").read and grants.at("/w/x").write and not grants.at("/q").write


def test_admins_may_do_everything() -> None:
    grants = PathGrants(({"/": NOTHING},), admin=True)
    assert grants.at("/x").delete and grants.whole_subtree("/", "delete")
    assert grants.rules("/", "read") == ([], True)


def test_legacy_write_stands_for_update() -> None:
    flags = {"can_write": True, "can_update": False}
    assert PathGrants(({"/": flags},), legacy=True).at("/x").update
    assert not PathGrants(({"/": flags},), legacy=False).at("/x").update


def test_a_cascade_needs_the_right_everywhere_below() -> None:
    grants = PathGrants(({"/": {"can_delete": True}, "/keep": NOTHING},))
    assert grants.whole_subtree("/other", "delete")
    assert not grants.whole_subtree("/", "delete")
    assert not grants.whole_subtree("/keep", "delete")


def test_rules_list_the_exceptions_below_longest_first() -> None:
    grants = PathGrants(({"/": R, "/a": NOTHING, "/a/b": R, "/c": R},))
    assert grants.rules("/", "read") == ([("/a/b", True), ("/a", False), ("/c", True)], True)
    assert grants.rules("/a", "read") == ([("/a/b", True)], False)


@pytest.mark.parametrize(
    ("exists", "method", "legacy", "delete_to_put", "rights"),
    [
        (False, "POST", False, False, ("write",)),
        (False, "PUT", False, False, ("write",)),
        (True, "PUT", False, False, ("update",)),
        (True, "PUT", True, False, ("write",)),
        (True, "PATCH", False, False, ("update",)),
        (True, "PATCH", True, False, ("write",)),
        (False, "PUT", False, True, ("write", "delete")),
        (True, "PUT", False, True, ("update", "delete")),
        (True, "DELETE", False, True, ("delete",)),
    ],
)
def test_what_each_write_needs(
    exists: bool, method: str, legacy: bool, delete_to_put: bool, rights: tuple[str, ...]
) -> None:
    assert needed(exists, method, legacy=legacy, delete_to_put=delete_to_put) == rights


def test_a_stored_grant_path_ending_in_a_slash_names_the_path_without_it() -> None:
    """Grants stored before grant paths were respelled may end in '/'; they match as the
    path without it (no data or file path ends in '/')."""
    grants = PathGrants(({"/": R, "/secret/": NOTHING, "open/": R},))
    assert not grants.at("/secret/x").read and not grants.at("/secret").read
    assert grants.at("/open/x").read
    assert grants.rules("/", "read") == ([("/secret", False), ("/open", True)], True)
