"""The permission engine itself: what a caller may do, target by target, grants next to
denials; roles, suspended targets, admins; and that cached answers never outlive a change,
whoever makes it."""

from __future__ import annotations

import apsw
import pytest

from edge.access.engine import Permissions
from edge.app import Site
from edge.kernel.principal import Principal
from storage import orgs as org_store
from storage import projects as project_store
from tests.rows import Rows

READ = {"user_permissions": {"can_read": True}}


@pytest.fixture
def rows(site: Site) -> Rows:
    w = Rows(site)
    w.org()
    return w


def test_no_access_means_no_level_and_no_permission(rows: Rows) -> None:
    user, group, project = rows.user(), rows.group(), rows.project()
    caller = rows.caller(user)
    assert not caller.group(group).held and not caller.project(project).held
    assert not caller.may("user", "read", project_id=project, group_ids=[group])
    assert not caller.is_group_admin(group) and not caller.is_project_admin(project)
    assert not caller.is_org_admin and not caller.is_admin_anywhere()


def test_group_access_grants_its_own_flags_and_blocks_only(rows: Rows) -> None:
    user, group, other = rows.user(), rows.group(), rows.group()
    rows.grant("group", group, user, can_read=True, **READ)
    caller = rows.caller(user)
    assert caller.group(group).can_read and caller.group(group).held
    assert caller.may("user", "read", group_ids=[group])
    assert not caller.may("user", "update", group_ids=[group])
    assert not caller.may("user", "read", group_ids=[other])
    assert not caller.is_group_admin(group)


def test_access_through_a_role_counts_as_ones_own(rows: Rows) -> None:
    user, group, role = rows.user(), rows.group(), rows.role()
    rows.grant("group", group, role, "role", is_admin=True)
    assert not rows.caller(user).is_group_admin(group)
    rows.grant("role", role, user)
    caller = rows.caller(user)
    assert caller.is_group_admin(group) and role in caller.roles


@pytest.mark.parametrize("off", ["role", "role access"])
def test_a_suspended_role_or_role_access_grants_nothing(rows: Rows, off: str) -> None:
    user, group = rows.user(), rows.group()
    role = rows.role(active=off != "role")
    rows.grant("group", group, role, "role", is_admin=True)
    rows.grant("role", role, user)
    if off == "role access":
        rows.patch_access(role, user, is_active=False)
    caller = rows.caller(user)
    assert not caller.is_group_admin(group) and not caller.roles


def test_suspended_groups_and_projects_grant_nothing(rows: Rows) -> None:
    user = rows.user()
    group, project = rows.group(active=False), rows.project(active=False)
    rows.grant("group", group, user, is_admin=True)
    rows.grant("project", project, user, is_admin=True)
    caller = rows.caller(user)
    assert not caller.group(group).held and not caller.is_group_admin(group)
    assert not caller.is_project_admin(project) and not caller.is_admin_anywhere()


def test_a_suspended_access_object_grants_nothing(rows: Rows) -> None:
    user, group = rows.user(), rows.group()
    rows.grant("group", group, user, is_admin=True)
    rows.patch_access(group, user, is_active=False)
    assert not rows.caller(user).group(group).held


def test_project_admins_administer_the_projects_groups_only(rows: Rows) -> None:
    user, project = rows.user(), rows.project()
    inside, outside = rows.group(project), rows.group()
    rows.grant("project", project, user, is_admin=True)
    caller = rows.caller(user)
    assert caller.is_group_admin(inside) and caller.is_admin_anywhere()
    assert not caller.is_group_admin(outside) and not caller.is_org_admin
    assert caller.admin_projects() == [project]


def test_project_blocks_apply_to_the_projects_resources(rows: Rows) -> None:
    user, project, other = rows.user(), rows.project(), rows.project()
    rows.grant("project", project, user, **READ)
    caller = rows.caller(user)
    assert caller.may("user", "read", project_id=project)
    assert not caller.may("user", "read", project_id=other)
    assert not caller.may("user", "delete", project_id=project)


def test_org_blocks_apply_everywhere_in_the_org(rows: Rows) -> None:
    user, group, project = rows.user(), rows.group(), rows.project()
    rows.grant("org", rows.org_id, user, user_permissions={"can_update": True})
    caller = rows.caller(user)
    assert caller.may("user", "update") and caller.may("user", "update", project_id=project)
    assert not caller.may("user", "delete", group_ids=[group])
    assert caller.sees_all("user") is False  # update does not mean read


def test_org_admins_and_scoped_staff_may_do_anything(rows: Rows, site: Site) -> None:
    admin, group, project = rows.user(), rows.group(), rows.project()
    rows.grant("org", rows.org_id, admin, is_admin=True)
    staff = site.services.permissions.caller(Principal("staff", "s", "s", rows.org_id))
    for caller in (rows.caller(admin), staff):
        assert caller.is_org_admin and caller.is_group_admin(group)
        assert caller.is_project_admin(project) and caller.may("project", "delete")
        assert caller.sees_all("group")


def test_staff_without_a_scope_hold_nothing(site: Site, rows: Rows) -> None:
    staff = site.services.permissions.caller(Principal("staff", "s", "s", None))
    assert not staff.is_org_admin and not staff.may("group", "read")


def test_a_grant_counts_from_the_next_request(rows: Rows) -> None:
    user, group = rows.user(), rows.group()
    assert not rows.caller(user).group(group).held  # learnt and cached
    rows.grant("group", group, user, can_read=True)
    assert rows.caller(user).group(group).can_read


def test_a_change_made_by_another_process_counts_too(rows: Rows, site: Site) -> None:
    user, group = rows.user(), rows.group()
    rows.grant("group", group, user, is_admin=True)
    assert rows.caller(user).is_group_admin(group)
    other = apsw.Connection(str(site.services.db.path))  # another process, or the sqlite3 shell
    other.execute("UPDATE access SET is_admin = 0 WHERE target_id = ?", (group,))
    other.close()
    assert not rows.caller(user).is_group_admin(group)


def test_suspending_a_role_reaches_cached_holders(rows: Rows) -> None:
    user, group, role = rows.user(), rows.group(), rows.role()
    rows.grant("group", group, role, "role", can_read=True)
    rows.grant("role", role, user)
    assert rows.caller(user).group(group).can_read
    rows.db.write_sync(lambda c: c.execute("UPDATE roles SET is_active = 0 WHERE id = ?", (role,)))
    assert not rows.caller(user).group(group).held


def test_callers_are_cached_per_session(rows: Rows, site: Site) -> None:
    user = rows.user()
    first = rows.caller(user)
    assert rows.caller(user) is first
    scoped = rows.caller(user, project_id=rows.project())
    assert scoped is not first and scoped.principal.project_id is not None


def test_without_the_cache_every_call_builds_afresh(rows: Rows, site: Site) -> None:
    engine = Permissions(site.services.db, cache=False)
    principal = Principal("user", rows.user(), "s", rows.org_id)
    assert engine.caller(principal) is not engine.caller(principal)


def test_settings_kept_with_the_caller_follow_org_and_project_changes(rows: Rows) -> None:
    """Callers keep their org's and session project's settings; a settings change, made
    through storage here or in another process, bumps the access epoch and reaches them."""
    user, project = rows.user(), rows.project()
    caller = rows.caller(user, project_id=project)
    assert not caller.pii_admin_only()
    rows.db.write_sync(lambda c: org_store.patch(c, rows.org_id, {"settings": _pii(True)}))
    assert rows.caller(user, project_id=project).pii_admin_only()
    rows.db.write_sync(lambda c: org_store.patch(c, rows.org_id, {"settings": _pii(False)}))
    assert not rows.caller(user, project_id=project).pii_admin_only()
    rows.db.write_sync(lambda c: project_store.patch(c, project, {"settings": _pii(True)}))
    assert rows.caller(user, project_id=project).pii_admin_only()
    assert not rows.caller(user).pii_admin_only()  # the org-wide session sees the org's


def _pii(on: bool) -> dict[str, bool]:
    return {"pii_admin_only": on}
