"""The public `cyphermed` SDK against a live server: groups, roles and their access objects.

Every call goes through the SDK unchanged; every response must parse into its model (and,
where the caller is an admin, into the admin model too).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from cyphermed.api.auth import login
from cyphermed.api.groups import (
    create_group,
    create_group_access,
    delete_group_access_by_id,
    delete_group_by_id,
    get_group_access_by_id,
    get_group_by_id,
    get_groups,
    patch_group,
    patch_group_access,
)
from cyphermed.api.roles import (
    create_role,
    create_role_access,
    delete_role_access_by_id,
    delete_role_by_id,
    get_role_access_by_id,
    get_role_by_id,
    get_role_group_access,
    get_role_org_access,
    get_role_project_access,
    get_roles,
    patch_role,
    patch_role_access_by_id,
)
from cyphermed.client import AuthenticatedClient, Client
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    AdminGroupAccessInfo,
    AdminGroupInfo,
    AdminGroupList,
    AdminRoleAccessInfo,
    AdminRoleInfo,
    AdminRoleList,
    CreateGroupAccessBody,
    CreateGroupAccessBodyDataPaths,
    CreateGroupBody,
    CreateRoleAccessBody,
    CreateRoleBody,
    CreateRoleBodyCustomAttributes,
    CRUDPermissions,
    GroupAccessInfo,
    GroupInfo,
    GroupList,
    LoginFormParams,
    NewGroupInfo,
    NewRoleInfo,
    OrgAccessPermissions,
    PatchGroupAccessBody,
    PatchGroupBody,
    PatchRoleAccessBody,
    PatchRoleBody,
    RoleAccessInfo,
    RoleGroupAccessList,
    RoleInfo,
    RoleList,
    RoleOrgAccessInfo,
    RoleProjectAccessList,
    Success,
    TokenInfo,
    WRUDPermissions,
)

from edge.app import Site
from edge.kernel.principal import Principal
from tests.tenants import PASSWORD, Tenant

T = TypeVar("T")


async def in_thread(call: Callable[[], T]) -> T:
    return await asyncio.to_thread(call)


async def sign_in(base_url: str, tenant: Tenant, email: str) -> str:
    form = LoginFormParams(
        grant_type="password", username=email, password=PASSWORD, client_id=tenant.alias
    )

    def run() -> Any:
        with Client(base_url=base_url, raise_on_unexpected_status=True) as client:
            return login.sync(client=client, body=form)

    info = await in_thread(run)
    assert isinstance(info, TokenInfo)
    return str(info.access_token)


def client_for(base_url: str, token: str) -> AuthenticatedClient:
    return AuthenticatedClient(base_url=base_url, token=token, raise_on_unexpected_status=True)


def raw(response: Any) -> dict[str, Any]:
    return dict(json.loads(response.content))


async def test_sdk_creates_lists_reads_and_patches_a_group(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    token = await sign_in(base_url, tenant, tenant.admin_email)

    def admin_calls() -> None:
        with client_for(base_url, token) as c:
            made = create_group.sync(
                client=c, body=CreateGroupBody(name="Ward", tags=["icu"], create_own_access=False)
            )
            assert isinstance(made, NewGroupInfo)
            group_id = made.group.id
            listed = get_groups.sync_detailed(client=c, name="ward", tags_contains="icu", limit=10)
            assert isinstance(listed.parsed, GroupList | AdminGroupList)
            assert [g.id for g in AdminGroupList.from_dict(raw(listed)).groups] == [group_id]
            got = get_group_by_id.sync_detailed(group_id, client=c)
            assert isinstance(got.parsed, GroupInfo | AdminGroupInfo)
            admin_view = AdminGroupInfo.from_dict(raw(got)).group
            assert admin_view.name == "Ward" and admin_view.is_active is True
            assert admin_view.num_history == 10 and admin_view.tags == ["icu"]
            done = patch_group.sync(group_id, client=c, body=PatchGroupBody(description="ICU"))
            assert isinstance(done, Success) and done.message == "Success"

    await in_thread(admin_calls)


async def ward(site: Site, tenant: Tenant) -> tuple[str, str]:
    """The group Ward (description ICU) made through the services, and the user nurse."""
    body = {"name": "Ward", "description": "ICU", "create_own_access": False}
    return await site.services.groups.create(_admin(tenant), body), await tenant.add_user("nurse")


async def test_sdk_grants_group_access_and_the_member_reads_with_it(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    group_id, nurse = await ward(site, tenant)
    token = await sign_in(base_url, tenant, tenant.admin_email)
    nurse_token = await sign_in(base_url, tenant, "nurse@clinic.test")

    def admin_calls() -> None:
        with client_for(base_url, token) as c:
            paths = CreateGroupAccessBodyDataPaths.from_dict(
                {"notes": WRUDPermissions(can_read=True).to_dict()}
            )
            body = CreateGroupAccessBody(
                can_read=True, data_paths=paths, user_permissions=CRUDPermissions(can_read=True)
            )
            created = create_group_access.sync(group_id, nurse, client=c, body=body)
            assert isinstance(created, Success)
            access = get_group_access_by_id.sync_detailed(group_id, nurse, client=c)
            assert isinstance(access.parsed, GroupAccessInfo | AdminGroupAccessInfo)
            full = AdminGroupAccessInfo.from_dict(raw(access)).group_access
            assert full.grantee_id == nurse and full.can_read and full.is_active
            assert full.data_paths.to_dict() == {
                "/notes": {
                    "can_write": False,
                    "can_read": True,
                    "can_update": False,
                    "can_delete": False,
                }
            }
            patched = patch_group_access.sync(
                group_id, nurse, client=c, body=PatchGroupAccessBody(can_update=True)
            )
            assert isinstance(patched, Success)

    await in_thread(admin_calls)
    await in_thread(lambda: member_calls(base_url, nurse_token, group_id, nurse))


def member_calls(base_url: str, token: str, group_id: str, nurse: str) -> None:
    """What the nurse, a member of Ward with can_update, reads and may not do."""
    with client_for(base_url, token) as c:
        group = get_group_by_id.sync(group_id, client=c)
        assert isinstance(group, GroupInfo) and group.group.description == "ICU"
        mine = get_group_access_by_id.sync(group_id, nurse, client=c)
        assert isinstance(mine, GroupAccessInfo) and mine.group_access.can_update
        assert "is_active" not in mine.group_access.additional_properties
        listed = get_groups.sync(client=c)
        assert isinstance(listed, GroupList) and [g.id for g in listed.groups] == [group_id]
        try:
            delete_group_by_id.sync(group_id, client=c)
        except UnexpectedStatus as exc:
            assert exc.status_code == 403
        else:
            raise AssertionError("a member deleted the group")


async def test_sdk_removes_group_access_then_force_deletes_a_protected_group(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    group_id, nurse = await ward(site, tenant)
    await site.services.access.create(_admin(tenant), "group", group_id, nurse, {"can_read": True})
    token = await sign_in(base_url, tenant, tenant.admin_email)

    def clean_up() -> None:
        with client_for(base_url, token) as c:
            gone = delete_group_access_by_id.sync(group_id, nurse, client=c)
            assert isinstance(gone, Success)
            patch_group.sync(group_id, client=c, body=PatchGroupBody(is_delete_protected=True))
            deleted = delete_group_by_id.sync(group_id, client=c, force=True, permanent=True)
            assert isinstance(deleted, Success)
            counts = get_groups.sync(client=c, object_count=True)
            assert isinstance(counts, GroupList) and counts.object_count == 0

    await in_thread(clean_up)


NURSES = {  # the role Nurses, as the SDK's CreateRoleBody below makes it
    "name": "Nurses",
    "org_permissions": {"can_read": True, "group_permissions": {"can_read": True}},
    "custom_attributes": {"floor": 3},
}


async def test_sdk_creates_lists_reads_and_patches_a_role(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    token = await sign_in(base_url, tenant, tenant.admin_email)

    def admin_calls() -> None:
        with client_for(base_url, token) as c:
            body = CreateRoleBody(
                name="Nurses",
                org_permissions=OrgAccessPermissions(
                    can_read=True, group_permissions=CRUDPermissions(can_read=True)
                ),
                custom_attributes=CreateRoleBodyCustomAttributes.from_dict({"floor": 3}),
            )
            made = create_role.sync(client=c, body=body)
            assert isinstance(made, NewRoleInfo)
            role_id = made.role.id
            listed = get_roles.sync_detailed(client=c, name="nurses")
            assert isinstance(listed.parsed, RoleList | AdminRoleList)
            assert [r.id for r in AdminRoleList.from_dict(raw(listed)).roles] == [role_id]
            got = get_role_by_id.sync_detailed(role_id, client=c)
            assert isinstance(got.parsed, RoleInfo | AdminRoleInfo)
            role = AdminRoleInfo.from_dict(raw(got)).role
            assert role.is_active and role.is_org_admin is False
            assert role.org_permissions.can_read and role.org_permissions.group_permissions.can_read
            assert role.custom_attributes.to_dict() == {"floor": 3}
            assert isinstance(
                patch_role.sync(role_id, client=c, body=PatchRoleBody(description="Day shift")),
                Success,
            )

    await in_thread(admin_calls)


async def test_sdk_grants_role_access_and_changes_it(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    role_id = await site.services.roles.create(_admin(tenant), NURSES)
    nurse = await tenant.add_user("nurse")
    token = await sign_in(base_url, tenant, tenant.admin_email)

    def admin_calls() -> None:
        with client_for(base_url, token) as c:
            body2 = CreateRoleAccessBody(can_read=True)
            assert isinstance(
                create_role_access.sync(role_id, nurse, client=c, body=body2), Success
            )
            access = get_role_access_by_id.sync_detailed(role_id, nurse, client=c)
            assert isinstance(access.parsed, RoleAccessInfo | AdminRoleAccessInfo)
            assert AdminRoleAccessInfo.from_dict(raw(access)).role_access.account_id == nurse
            patched = patch_role_access_by_id.sync(
                role_id, nurse, client=c, body=PatchRoleAccessBody(can_update=True)
            )
            assert isinstance(patched, Success)

    await in_thread(admin_calls)


async def nurses_on_ward(site: Site, tenant: Tenant) -> tuple[str, str, str]:
    """Through the services: the role Nurses (Day shift), held by nurse, with group access
    to Ward (no description); their IDs (role, group, nurse)."""
    admin = _admin(tenant)
    nurse = await tenant.add_user("nurse")
    group_id = await site.services.groups.create(admin, {"name": "Ward"})
    role_id = await site.services.roles.create(admin, {**NURSES, "description": "Day shift"})
    await site.services.access.create(admin, "role", role_id, nurse, {"can_read": True})
    await site.services.access.create(admin, "group", group_id, role_id, {"can_read": True})
    return role_id, group_id, nurse


async def test_a_role_holder_reads_the_role_and_its_org_and_project_access(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    role_id, _, _ = await nurses_on_ward(site, tenant)
    nurse_token = await sign_in(base_url, tenant, "nurse@clinic.test")

    def nurse_calls() -> None:
        with client_for(base_url, nurse_token) as c:
            role = get_role_by_id.sync(role_id, client=c)
            assert isinstance(role, RoleInfo) and role.role.description == "Day shift"
            org = get_role_org_access.sync(role_id, client=c)
            assert isinstance(org, RoleOrgAccessInfo)
            assert org.org_access.grantee_id == role_id and org.org_access.can_read
            projects = get_role_project_access.sync(role_id, client=c)
            assert isinstance(projects, RoleProjectAccessList) and projects.project_access == []

    await in_thread(nurse_calls)


async def test_a_role_holder_filters_the_roles_group_access(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    role_id, group_id, _ = await nurses_on_ward(site, tenant)
    nurse_token = await sign_in(base_url, tenant, "nurse@clinic.test")

    def nurse_calls() -> None:
        with client_for(base_url, nurse_token) as c:
            groups = get_role_group_access.sync(role_id, client=c, group_name="ward")
            assert isinstance(groups, RoleGroupAccessList)
            assert [(a.group_id, a.group_name) for a in groups.group_access] == [(group_id, "Ward")]
            filtered = get_role_group_access.sync(
                role_id,
                client=c,
                can_read=True,
                is_admin=False,
                user_permissions_can_create=False,
                role_permissions_can_delete=False,
                group_description="",
                created_date_gte=datetime(2000, 1, 1, tzinfo=UTC),
                order_by="group_name",
                desc=True,
                limit=5,
                page=1,
            )
            assert isinstance(filtered, RoleGroupAccessList)
            assert [a.group_id for a in filtered.group_access] == [group_id]
            tagged = get_role_group_access.sync(role_id, client=c, group_tags_contains_any="a,b")
            assert isinstance(tagged, RoleGroupAccessList) and tagged.group_access == []
            ids = get_role_group_access.sync(role_id, client=c, ids_only=True)
            assert isinstance(ids, RoleGroupAccessList) and ids.group_ids == [group_id]

    await in_thread(nurse_calls)


async def test_a_role_holder_finds_the_role_and_reads_the_group_through_it(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    role_id, group_id, _ = await nurses_on_ward(site, tenant)
    nurse_token = await sign_in(base_url, tenant, "nurse@clinic.test")

    def nurse_calls() -> None:
        with client_for(base_url, nurse_token) as c:
            roles = get_roles.sync(
                client=c,
                name_regex="^Nur",
                is_project_admin=False,
                group_id=group_id,
                is_group_admin=False,
                search="nurses",
                search_fields="name",
            )
            assert isinstance(roles, RoleList) and [r.id for r in roles.roles] == [role_id]
            assert roles.roles[0].is_group_admin is False
            # The role's org permissions are the nurse's own: she may now read the group.
            group = get_group_by_id.sync(group_id, client=c)
            assert isinstance(group, GroupInfo) and group.group.name == "Ward"

    await in_thread(nurse_calls)


async def test_sdk_removes_role_access_then_deletes_the_role(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    role_id, _, nurse = await nurses_on_ward(site, tenant)
    token = await sign_in(base_url, tenant, tenant.admin_email)

    def clean_up() -> None:
        with client_for(base_url, token) as c:
            gone = delete_role_access_by_id.sync(role_id, nurse, client=c, permanent=True)
            assert isinstance(gone, Success)
            assert isinstance(delete_role_by_id.sync(role_id, client=c), Success)
            listed = get_roles.sync(client=c)
            assert isinstance(listed, RoleList) and listed.roles == []

    await in_thread(clean_up)


def _admin(tenant: Tenant) -> Principal:
    return Principal("user", tenant.admin_id, None, tenant.org_id)
