"""The public `cyphermed` SDK against a live server: every data operation.

The SDK reads values as objects (DataSchema.value copies a dict), so the values stored
here are objects; continuation keys come back as objects and go back JSON-encoded.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from cyphermed.api.data import (
    bulk_json_data_request,
    delete_json_data,
    get_json_data,
    patch_json_data,
    post_json_data,
    put_json_data,
)
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    BulkDataBody,
    DataAtPath,
    DataByPath,
    DataInfo,
    DataSchema,
    DeleteDataJob,
    GetDataJob,
    PatchDataBody,
    PatchDataBodyValueType0,
    Success,
    UploadDataBody,
    UploadDataBodyValueType0,
    UploadDataJob,
    UploadDataJobValueType0,
)

from tests.data import seed
from tests.sdk.test_sdk_groups_roles import client_for, in_thread, sign_in
from tests.world import World


def value(**fields: Any) -> UploadDataBodyValueType0:
    return UploadDataBodyValueType0.from_dict(fields)


async def test_sdk_drives_every_data_operation(base_url: str, world: World) -> None:
    token = await sign_in(base_url, world.tenant, world.tenant.admin_email)
    group = world.org_group_id

    def calls() -> None:
        with client_for(base_url, token) as c:
            body = UploadDataBody(value=value(celsius=21.5), unicode_1="hall", number_1=3)
            assert isinstance(put_json_data.sync(group, "plant/t1", client=c, body=body), Success)
            created = post_json_data.sync(
                group, "plant/t2", client=c, body=UploadDataBody(value=value(a=1))
            )
            assert isinstance(created, Success)
            with pytest.raises(UnexpectedStatus) as conflict:
                post_json_data.sync(
                    group, "plant/t2", client=c, body=UploadDataBody(value=value(a=2))
                )
            assert conflict.value.status_code == 409
            patch = PatchDataBody(value=PatchDataBodyValueType0.from_dict({"b": 2}))
            assert isinstance(
                patch_json_data.sync(group, "plant/t2", client=c, body=patch), Success
            )

            one = get_json_data.sync(group, "plant/t1", client=c, verify=True)
            assert isinstance(one, DataAtPath) and isinstance(one.data, DataSchema)
            assert one.data.value.to_dict() == {"celsius": 21.5}
            assert one.data.unicode_1 == "hall" and one.data.number_1 == 3
            assert one.data.verified is True and one.data.revision == 1

            many = get_json_data.sync(group, "plant", client=c, cascade=True)
            assert isinstance(many, DataAtPath) and isinstance(many.data, list)
            assert [d.path for d in many.data] == ["/plant/t1", "/plant/t2"]
            assert many.data[1].value.to_dict() == {"a": 1, "b": 2}
            filtered = get_json_data.sync(group, "plant", client=c, cascade=True, unicode_1_sw="ha")
            assert isinstance(filtered, DataAtPath) and isinstance(filtered.data, list)
            assert [d.path for d in filtered.data] == ["/plant/t1"]

            gone = delete_json_data.sync(group, "plant", client=c, cascade=True)
            assert isinstance(gone, Success)
            with pytest.raises(UnexpectedStatus) as missing:
                get_json_data.sync(group, "plant/t1", client=c)
            assert missing.value.status_code == 404

    await in_thread(calls)


async def test_sdk_pages_with_continuation_keys(base_url: str, world: World) -> None:
    await seed(world, [f"/log/{i:03d}" for i in range(25)])
    token = await sign_in(base_url, world.tenant, world.tenant.admin_email)

    def calls() -> list[str]:
        seen: list[str] = []
        key: str | None = None
        with client_for(base_url, token) as c:
            while True:
                extra: dict[str, Any] = {"last_evaluated_key": key} if key else {}
                page = get_json_data.sync(
                    world.org_group_id,
                    "log",
                    client=c,
                    cascade=True,
                    paths_only=True,
                    limit=10,
                    **extra,
                )
                assert isinstance(page, DataAtPath) and isinstance(page.paths, list)
                seen += page.paths
                if not page.last_evaluated_key:
                    return seen
                key = json.dumps(page.last_evaluated_key.to_dict())

    assert await in_thread(calls) == [f"/log/{i:03d}" for i in range(25)]


async def test_sdk_bulk_requests(base_url: str, world: World) -> None:
    token = await sign_in(base_url, world.tenant, world.tenant.admin_email)
    group = world.org_group_id

    def calls() -> None:
        with client_for(base_url, token) as c:
            job = UploadDataJob(
                value=UploadDataJobValueType0.from_dict({"n": 1}), paths=["b/1", "b/2"]
            )
            made = bulk_json_data_request.sync(
                group, client=c, body=BulkDataBody(method="POST", jobs=[job])
            )
            assert isinstance(made, Success)
            read = bulk_json_data_request.sync(
                group,
                client=c,
                body=BulkDataBody(method="GET", jobs=[GetDataJob(paths=["b/1", "b/9"])]),
            )
            assert isinstance(read, DataByPath)
            found = read.data_by_path["/b/1"]  # the SDK tries DataInfo first: it takes any object
            assert isinstance(found, DataInfo) and found["value"] == {"n": 1}
            assert "/b/9" not in read.data_by_path and read["missing_paths"] == ["/b/9"]
            removed = bulk_json_data_request.sync(
                group,
                client=c,
                body=BulkDataBody(method="DELETE", jobs=[DeleteDataJob(paths=["b"], cascade=True)]),
            )
            assert isinstance(removed, Success)

    await in_thread(calls)
