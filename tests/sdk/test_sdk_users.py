"""The public `cyphermed` SDK against a live server: users, the account, the caller's org.

Every response must parse into the SDK's richest model the caller may see: admins get
AdminUserInfo, other readers UserInfo, and AnonUserInfo where the org hides personal data.
"""

from __future__ import annotations

import asyncio
import datetime
import io
from collections.abc import Callable
from typing import TypeVar

import pytest
from cyphermed.api.account import (
    delete_account_picture,
    get_account_group_access,
    get_account_org_access,
    get_account_project_access,
    get_account_role_access,
    get_current_session_access,
    get_dashboard_config,
    set_account_picture,
    set_dashboard_config,
)
from cyphermed.api.my_organization import get_my_org_settings, patch_my_org_settings
from cyphermed.api.users import (
    create_user,
    delete_user_by_id,
    get_user_by_id,
    get_users,
    patch_user,
)
from cyphermed.client import AuthenticatedClient
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    AccountGroupAccessList,
    AccountOrgAccessInfo,
    AccountProjectAccessList,
    AdminUserInfo,
    AdminUserList,
    AnonUserInfo,
    CreateUserBody,
    CreateUserBodyCustomAttributes,
    CurrentSessionAccessInfo,
    DashboardConfig,
    NewUserInfo,
    OrgAccessPermissions,
    OrgInfo,
    PatchOrgSettingsBody,
    PatchUserBody,
    PatchUserBodyRestrictedCustomAttributes,
    SetAccountPictureFileParams,
    Success,
    UserInfo,
    UserList,
    WidgetInfo,
    WidgetInfoConfig,
)
from cyphermed.models.account_role_access_list import AccountRoleAccessList
from cyphermed.models.admin_account_role_access_list import AdminAccountRoleAccessList
from cyphermed.models.role_id_list import RoleIdList
from cyphermed.types import File

from tests.images import image_bytes
from tests.world import World

T = TypeVar("T")


async def sdk(base_url: str, token: str | None, call: Callable[[AuthenticatedClient], T]) -> T:
    """One synchronous SDK call in a thread, so this loop keeps serving it."""

    def run() -> T:
        client = AuthenticatedClient(
            base_url=base_url, token=token or "", raise_on_unexpected_status=True
        )
        with client:
            return call(client)

    return await asyncio.to_thread(run)


async def test_users_crud_through_the_sdk(base_url: str, world: World) -> None:
    admin = await world.token("org_admin")
    body = CreateUserBody(
        email="sdk.user@clinic.test",
        username="sdk-user",
        first_name="Sam",
        phone_number="+15550109999",
        custom_attributes=CreateUserBodyCustomAttributes.from_dict({"age": 41}),
        org_permissions=OrgAccessPermissions(can_read=True),
        tags=["sdk"],
    )
    created = await sdk(base_url, admin, lambda c: create_user.sync(client=c, body=body))
    assert isinstance(created, NewUserInfo)
    user_id = created.user.id

    got = await sdk(base_url, admin, lambda c: get_user_by_id.sync(user_id, client=c))
    assert isinstance(got, AdminUserInfo)
    user = got.user
    assert (user.id, user.username, user.email) == (user_id, "sdk-user", "sdk.user@clinic.test")
    assert user.custom_attributes.additional_properties == {"age": 41}
    assert user.has_temporary_password is True and user.is_active is True
    assert isinstance(user.created_date, datetime.datetime)
    assert user.org_permissions.can_read is True and user.tags == ["sdk"]

    listed = await sdk(base_url, admin, lambda c: get_users.sync(client=c, search="sam"))
    assert isinstance(listed, AdminUserList) and [u.id for u in listed.users] == [user_id]
    listed = await sdk(
        base_url, admin, lambda c: get_users.sync(client=c, username="SDK-USER", limit=5)
    )
    assert isinstance(listed, AdminUserList) and [u.id for u in listed.users] == [user_id]

    patch = PatchUserBody(
        nickname="Sammy",
        locale="en_gb",
        restricted_custom_attributes=PatchUserBodyRestrictedCustomAttributes.from_dict({"t": 1}),
    )
    done = await sdk(base_url, admin, lambda c: patch_user.sync(user_id, client=c, body=patch))
    assert isinstance(done, Success)
    got = await sdk(base_url, admin, lambda c: get_user_by_id.sync(user_id, client=c))
    assert isinstance(got, AdminUserInfo)
    assert got.user.nickname == "Sammy" and got.user.locale == "en-GB"
    assert got.user.restricted_custom_attributes.additional_properties == {"t": 1}

    done = await sdk(
        base_url, admin, lambda c: delete_user_by_id.sync(user_id, client=c, permanent=True)
    )
    assert isinstance(done, Success)
    with pytest.raises(UnexpectedStatus) as gone:
        await sdk(base_url, admin, lambda c: get_user_by_id.sync(user_id, client=c))
    assert gone.value.status_code == 404


async def test_non_admins_get_user_models_and_pii_hidden_gets_anonymous(
    base_url: str, world: World
) -> None:
    reader = await world.token("org_user_perms")
    member = world.id("member")
    got = await sdk(base_url, reader, lambda c: get_user_by_id.sync(member, client=c))
    assert isinstance(got, UserInfo) and not isinstance(got, AdminUserInfo)
    assert got.user.username == "member"
    listed = await sdk(base_url, reader, lambda c: get_users.sync(client=c))
    assert isinstance(listed, UserList) and member in {u.id for u in listed.users}
    me = await sdk(
        base_url, reader, lambda c: get_user_by_id.sync(world.id("org_user_perms"), client=c)
    )
    assert isinstance(me, UserInfo) and me.user.org_permissions.user_permissions.can_read is True

    admin = await world.token("org_admin")
    settings = PatchOrgSettingsBody(pii_admin_only=True)
    await sdk(base_url, admin, lambda c: patch_my_org_settings.sync(client=c, body=settings))
    got = await sdk(base_url, reader, lambda c: get_user_by_id.sync(member, client=c))
    assert isinstance(got, AnonUserInfo) and got.user.username == "member"


async def test_account_calls_parse(base_url: str, world: World) -> None:
    await world.grant("role", world.project_role_id, world.id("member"), can_read=True)
    token = await world.token("member")

    org = await sdk(base_url, token, lambda c: get_account_org_access.sync(client=c))
    assert isinstance(org, AccountOrgAccessInfo) and org.org_access.is_admin is False
    groups = await sdk(base_url, token, lambda c: get_account_group_access.sync(client=c))
    assert isinstance(groups, AccountGroupAccessList)
    assert [g.group_name for g in groups.group_access] == ["Ward"]
    projects = await sdk(base_url, token, lambda c: get_account_project_access.sync(client=c))
    assert isinstance(projects, AccountProjectAccessList) and projects.project_access == []
    roles = await sdk(base_url, token, lambda c: get_account_role_access.sync(client=c))
    assert isinstance(roles, AccountRoleAccessList)
    assert [r.role_id for r in roles.role_access] == [world.project_role_id]
    ids = await sdk(
        base_url, token, lambda c: get_account_role_access.sync(client=c, ids_only=True)
    )
    assert isinstance(ids, RoleIdList) and ids.role_ids == [world.project_role_id]
    session = await sdk(base_url, token, lambda c: get_current_session_access.sync(client=c))
    assert isinstance(session, CurrentSessionAccessInfo)
    assert session.org_permissions.is_admin is False

    await world.grant("role", world.project_role_id, world.tenant.admin_id)
    admin = await world.token("org_admin")
    roles = await sdk(base_url, admin, lambda c: get_account_role_access.sync(client=c))
    assert isinstance(roles, AdminAccountRoleAccessList)
    assert roles.role_access[0].is_active is True


async def test_dashboard_and_picture_through_the_sdk(base_url: str, world: World) -> None:
    token = await world.token("member")
    empty = await sdk(base_url, token, lambda c: get_dashboard_config.sync(client=c))
    assert isinstance(empty, DashboardConfig) and empty.widgets == []
    widget = WidgetInfo(
        order=1,
        widget_type="plot",
        widget_title="Pulse",
        config=WidgetInfoConfig.from_dict({"plot_type": "line", "data_path": "/pulse"}),
    )
    config = DashboardConfig(widgets=[widget])
    done = await sdk(base_url, token, lambda c: set_dashboard_config.sync(client=c, body=config))
    assert isinstance(done, Success)
    got = await sdk(base_url, token, lambda c: get_dashboard_config.sync(client=c))
    assert isinstance(got, DashboardConfig) and got.widgets[0].widget_title == "Pulse"
    assert got.widgets[0].config.additional_properties == {
        "plot_type": "line",
        "data_path": "/pulse",
    }

    upload = SetAccountPictureFileParams(
        file=File(
            payload=io.BytesIO(image_bytes("PNG", (48, 32))),
            file_name="me.png",
            mime_type="image/png",
        )
    )
    done = await sdk(base_url, token, lambda c: set_account_picture.sync(client=c, body=upload))
    assert isinstance(done, Success)
    me = await sdk(base_url, token, lambda c: get_user_by_id.sync(world.id("member"), client=c))
    assert isinstance(me, UserInfo) and me.user.picture_content_type == "image/png"
    assert me.user.picture_base64
    done = await sdk(base_url, token, lambda c: delete_account_picture.sync(client=c))
    assert isinstance(done, Success)


async def test_my_org_through_the_sdk(base_url: str, world: World) -> None:
    plain = await world.token("plain")
    org = await sdk(base_url, plain, lambda c: get_my_org_settings.sync(client=c))
    assert isinstance(org, OrgInfo) and org.org.id == world.tenant.org_id
    body = PatchOrgSettingsBody(description="Updated by the SDK", session_expire_mins=10)
    with pytest.raises(UnexpectedStatus) as denied:
        await sdk(base_url, plain, lambda c: patch_my_org_settings.sync(client=c, body=body))
    assert denied.value.status_code == 403
    admin = await world.token("org_admin")
    done = await sdk(base_url, admin, lambda c: patch_my_org_settings.sync(client=c, body=body))
    assert isinstance(done, Success)
    org = await sdk(base_url, admin, lambda c: get_my_org_settings.sync(client=c))
    assert isinstance(org, OrgInfo)
    assert org.org.description == "Updated by the SDK" and org.org.session_expire_mins == 10
