"""The public `cyphermed` SDK's `search` on the lists it offers (docs/lists.md "Search"):
a group's files and data, and the access lists of the caller and of a role. Each finds
what matches, not what does not, within what its caller may read, page by page."""

from __future__ import annotations

import json

import pytest
from cyphermed.api.account import get_account_group_access, get_account_project_access
from cyphermed.api.data import get_json_data, put_json_data
from cyphermed.api.files import get_files_data
from cyphermed.api.roles import get_role_group_access
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    AccountGroupAccessList,
    AccountProjectAccessList,
    DataAtPath,
    FilesAtPath,
    RoleGroupAccessList,
    Success,
    UploadDataBody,
)

from edge.app import Site
from tests.sdk.test_sdk_data import value
from tests.sdk.test_sdk_files import scans, single_part
from tests.sdk.test_sdk_groups_roles import _admin, client_for, in_thread, nurses_on_ward, sign_in
from tests.tenants import Tenant


async def test_sdk_searches_a_groups_files_and_data(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    group, token = await scans(base_url, site, tenant)

    def calls() -> None:
        with client_for(base_url, token) as c:
            single_part(c, group, "reports/blood-panel.txt", b"a", unicode_1="Oslo")
            single_part(c, group, "reports/xray.png", b"b")
            single_part(c, group, "notes/blood-bank.txt", b"c")
            found = get_files_data.sync(group, "/", client=c, cascade=True, search="blood")
            assert isinstance(found, FilesAtPath)
            assert [f.path for f in found.files] == [
                "/notes/blood-bank.txt",
                "/reports/blood-panel.txt",
            ]
            one = get_files_data.sync(
                group, "reports", client=c, cascade=True, paths_only=True, search="osl"
            )
            assert isinstance(one, FilesAtPath) and one.paths == ["/reports/blood-panel.txt"]
            none = get_files_data.sync(group, "/", client=c, cascade=True, search="femur")
            assert isinstance(none, FilesAtPath) and none.files == []
            first = get_files_data.sync(
                group, "/", client=c, cascade=True, paths_only=True, search="blood", limit=1
            )
            assert isinstance(first, FilesAtPath) and first.paths == ["/notes/blood-bank.txt"]
            rest = get_files_data.sync(
                group,
                "/",
                client=c,
                cascade=True,
                paths_only=True,
                search="blood",
                limit=1,
                last_evaluated_key=json.dumps(first.last_evaluated_key.to_dict()),
            )
            assert isinstance(rest, FilesAtPath) and rest.paths == ["/reports/blood-panel.txt"]
            with pytest.raises(UnexpectedStatus) as refused:
                get_files_data.sync(
                    group, "/", client=c, cascade=True, search="x", search_fields="etag"
                )
            assert refused.value.status_code == 400

            body = UploadDataBody(value=value(t=1), unicode_1="Boiler room")
            assert isinstance(put_json_data.sync(group, "plant/a", client=c, body=body), Success)
            body = UploadDataBody(value=value(t=2), unicode_1="Hall")
            assert isinstance(put_json_data.sync(group, "plant/b", client=c, body=body), Success)
            data = get_json_data.sync(group, "plant", client=c, cascade=True, search="boil")
            assert isinstance(data, DataAtPath) and isinstance(data.data, list)
            assert [d.path for d in data.data] == ["/plant/a"]
            data = get_json_data.sync(group, "plant", client=c, cascade=True, search="attic")
            assert isinstance(data, DataAtPath) and data.data == []

    await in_thread(calls)


async def test_sdk_searches_the_access_lists(base_url: str, site: Site, tenant: Tenant) -> None:
    role_id, ward, nurse = await nurses_on_ward(site, tenant)
    admin = _admin(tenant)
    annex = await site.services.groups.create(
        admin, {"name": "Annex", "description": "Night shift", "create_own_access": False}
    )
    await site.services.access.create(admin, "group", annex, nurse, {"can_read": True})
    hidden = {"name": "Night depot", "create_own_access": False}  # the nurse holds none
    await site.services.groups.create(admin, hidden)
    nurse_token = await sign_in(base_url, tenant, "nurse@clinic.test")
    admin_token = await sign_in(base_url, tenant, tenant.admin_email)

    def nurse_calls() -> None:
        with client_for(base_url, nurse_token) as c:
            night = get_account_group_access.sync(client=c, search="night")
            assert isinstance(night, AccountGroupAccessList)
            assert [a.group_id for a in night.group_access] == [annex]
            both = get_account_group_access.sync(client=c, search="ward annex")
            assert isinstance(both, AccountGroupAccessList) and both.group_access == []
            ward_only = get_account_group_access.sync(client=c, search="WAR", search_fields="name")
            assert isinstance(ward_only, AccountGroupAccessList)
            assert [a.group_id for a in ward_only.group_access] == [ward]  # through Nurses
            depot = get_account_group_access.sync(client=c, search="depot")
            assert isinstance(depot, AccountGroupAccessList) and depot.group_access == []
            projects = get_account_project_access.sync(client=c, search="ward")
            assert isinstance(projects, AccountProjectAccessList)
            assert projects.project_access == []

    def admin_calls() -> None:
        with client_for(base_url, admin_token) as c:
            held = get_role_group_access.sync(
                role_id, client=c, search="ward", search_fields="name"
            )
            assert isinstance(held, RoleGroupAccessList)
            assert [a.group_id for a in held.group_access] == [ward]
            none = get_role_group_access.sync(role_id, client=c, search="annex")
            assert isinstance(none, RoleGroupAccessList) and none.group_access == []

    await in_thread(nurse_calls)
    await in_thread(admin_calls)
