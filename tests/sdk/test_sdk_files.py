"""The public `cyphermed` SDK against a live server: files, single-part and multipart, the
reads it offers, PATCH and DELETE, and a member's denials. Every response must parse into
its model; the bytes go to and from the presigned URLs as any HTTP client sends them."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import httpx
from cyphermed.api.files import (
    delete_files_data,
    get_files_data,
    patch_files_data,
    put_files_data,
)
from cyphermed.api.groups import create_group_access
from cyphermed.errors import UnexpectedStatus
from cyphermed.models import (
    CreateGroupAccessBody,
    CreateGroupAccessBodyFilePaths,
    FilesAtPath,
    FilesUrlForPath,
    PatchFilesBody,
    PutFilesBody,
    PutFilesBodyEtagByPart,
    Success,
    WRUDPermissions,
)

from edge.app import Site
from edge.kernel.principal import Principal
from tests.sdk.test_sdk_groups_roles import client_for, in_thread, sign_in
from tests.tenants import Tenant

PART = 5 * 1024 * 1024  # S3's smallest part, the default


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def upload(url: str, data: bytes) -> str:
    response = httpx.put(url, content=data)
    assert response.status_code == 200, response.text
    return str(response.headers["etag"])


def download(url: str) -> bytes:
    response = httpx.get(url)
    assert response.status_code == 200
    return response.content


def single_part(c: Any, group: str, path: str, data: bytes, **fields: Any) -> None:
    started = put_files_data.sync(group, path, client=c, body=PutFilesBody(**fields))
    assert isinstance(started, FilesUrlForPath) and isinstance(started.url, str)
    assert upload(started.url, data) == f'"{md5(data)}"'


def multipart(c: Any, group: str, path: str, parts: list[bytes], by_count: bool) -> None:
    started = put_files_data.sync(group, path, client=c, body=PutFilesBody(num_parts=len(parts)))
    assert isinstance(started, FilesUrlForPath) and isinstance(started.upload_id, str)
    etags = {
        str(n): upload(url, data)
        for n, (url, data) in enumerate(zip(started.urls, parts, strict=True), 1)
    }
    if by_count:
        body = PutFilesBody(completed_upload_id=started.upload_id, num_parts=len(parts))
    else:
        by_part = PutFilesBodyEtagByPart.from_dict(etags)
        body = PutFilesBody(completed_upload_id=started.upload_id, etag_by_part=by_part)
    done = put_files_data.sync(group, path, client=c, body=body)
    assert isinstance(done, FilesUrlForPath | Success)
    assert done.to_dict() == {"message": "Success"}


def composite(parts: list[bytes]) -> str:
    digests = b"".join(hashlib.md5(p).digest() for p in parts)
    return f"{md5(digests)}-{len(parts)}"


async def scans(base_url: str, site: Site, tenant: Tenant) -> tuple[str, str]:
    """The group Scans of Clinic, and its org admin's token (signed in through the SDK)."""
    admin = Principal("user", tenant.admin_id, None, tenant.org_id)
    group = await site.services.groups.create(admin, {"name": "Scans"})
    return group, await sign_in(base_url, tenant, tenant.admin_email)


async def test_sdk_uploads_single_and_multipart_files_and_reads_them(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    group, token = await scans(base_url, site, tenant)
    small = os.urandom(50_000)
    parts = [os.urandom(PART), b"the end"]

    def admin_calls() -> None:
        with client_for(base_url, token) as c:
            single_part(c, group, "reports/a.txt", small, content_type="text/plain", unicode_1="x")
            multipart(c, group, "/reports/big.bin", parts, by_count=False)
            multipart(c, group, "reports/count.bin", parts, by_count=True)
            got = get_files_data.sync(group, "reports/a.txt", client=c)
            assert isinstance(got, FilesAtPath) and got.file.etag == md5(small)
            assert (got.file.path, got.file.filename, got.file.unicode_1) == (
                "/reports/a.txt",
                "a.txt",
                "x",
            )
            assert got.file.content_type == "text/plain" and got.file.size == len(small)
            assert download(got.url) == small
            big = get_files_data.sync(group, "reports/big.bin", client=c)
            assert isinstance(big, FilesAtPath) and big.file.etag == composite(parts)
            assert download(big.url) == b"".join(parts)
            reads(c, group)

    await in_thread(admin_calls)


async def test_sdk_patches_a_file_a_reader_sees_it_and_may_not_upload(
    base_url: str, site: Site, tenant: Tenant
) -> None:
    group, token = await scans(base_url, site, tenant)
    nurse = await tenant.add_user("nurse")
    nurse_token = await sign_in(base_url, tenant, "nurse@clinic.test")

    def admin_calls() -> None:
        with client_for(base_url, token) as c:
            single_part(c, group, "reports/a.txt", b"a report")
            patched = patch_files_data.sync(
                group, "reports/a.txt", client=c, body=PatchFilesBody(unicode_2="y")
            )
            assert isinstance(patched, Success)
            try:
                patch_files_data.sync(group, "reports/a.txt", client=c, body=PatchFilesBody(size=3))
            except UnexpectedStatus as exc:
                assert exc.status_code == 400 and b"set by the server" in exc.content
            else:
                raise AssertionError("the server let a client set a file's size")
            access = CreateGroupAccessBody(
                file_paths=CreateGroupAccessBodyFilePaths.from_dict(
                    {"reports": WRUDPermissions(can_read=True).to_dict()}
                )
            )
            assert isinstance(
                create_group_access.sync(group, nurse, client=c, body=access), Success
            )

    await in_thread(admin_calls)

    def nurse_calls() -> None:
        with client_for(base_url, nurse_token) as c:
            info = get_files_data.sync(group, "reports/a.txt", client=c, info_only=True)
            assert isinstance(info, FilesAtPath) and info.file.unicode_2 == "y"
            assert "url" not in info.to_dict()
            try:
                put_files_data.sync(group, "reports/mine.txt", client=c, body=PutFilesBody())
            except UnexpectedStatus as exc:
                assert exc.status_code == 403
            else:
                raise AssertionError("a reader started an upload")

    await in_thread(nurse_calls)


async def test_sdk_deletes_a_file_then_a_folder(base_url: str, site: Site, tenant: Tenant) -> None:
    group, token = await scans(base_url, site, tenant)

    def deletes() -> None:
        with client_for(base_url, token) as c:
            single_part(c, group, "reports/a.txt", b"a report")
            single_part(c, group, "reports/b.txt", b"another")
            assert isinstance(delete_files_data.sync(group, "reports/a.txt", client=c), Success)
            try:
                get_files_data.sync(group, "reports/a.txt", client=c)
            except UnexpectedStatus as exc:
                assert exc.status_code == 404
            else:
                raise AssertionError("a deleted file was found")
            assert isinstance(
                delete_files_data.sync(group, "reports", client=c, cascade=True), Success
            )
            left = get_files_data.sync(group, "/", client=c, cascade=True, object_count=True)
            assert isinstance(left, FilesAtPath) and left.object_count == 0

    await in_thread(deletes)


def reads(c: Any, group: str) -> None:
    """The read variants: a cascade with URLs, paths only, URLs only, a page at a time,
    filters and a path filter, and the 308 redirect."""
    tree = get_files_data.sync(group, "reports", client=c, cascade=True)
    assert isinstance(tree, FilesAtPath)
    assert [f.path for f in tree.files] == [
        "/reports/a.txt",
        "/reports/big.bin",
        "/reports/count.bin",
    ]
    assert len(tree.urls) == 3 and download(tree.urls[0]) is not None
    paths = get_files_data.sync(group, "/", client=c, cascade=True, paths_only=True, limit=2)
    assert isinstance(paths, FilesAtPath) and paths.paths == ["/reports/a.txt", "/reports/big.bin"]
    key = json.dumps(paths.last_evaluated_key.to_dict())
    rest = get_files_data.sync(
        group, "/", client=c, cascade=True, paths_only=True, limit=2, last_evaluated_key=key
    )
    assert isinstance(rest, FilesAtPath) and rest.paths == ["/reports/count.bin"]
    urls = get_files_data.sync(group, "reports/a.txt", client=c, url_only=True)
    assert isinstance(urls, FilesAtPath) and urls.url and not urls.files
    bins = get_files_data.sync(
        group, "reports", client=c, cascade=True, paths_only=True, path_filter=r"\.bin$"
    )
    assert isinstance(bins, FilesAtPath) and bins.paths == [
        "/reports/big.bin",
        "/reports/count.bin",
    ]
    filtered = get_files_data.sync(
        group, "reports", client=c, cascade=True, paths_only=True, unicode_1="x", size_lte=60000
    )
    assert isinstance(filtered, FilesAtPath) and filtered.paths == ["/reports/a.txt"]
    moved = get_files_data.sync_detailed(group, "reports/a.txt", client=c, redirect=True)
    assert moved.status_code == 308 and moved.parsed is None
    assert download(moved.headers["location"])
