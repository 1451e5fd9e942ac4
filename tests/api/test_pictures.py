"""Profile pictures: real images made by Pillow, checked by decoding, stored at 256 px."""

from __future__ import annotations

import base64
import io
import os
from typing import Any

import pytest
from aiohttp import FormData
from PIL import Image

from tests import wire
from tests.images import image_bytes
from tests.world import World, table


def form(data: bytes, filename: str = "me.png", content_type: str = "image/png") -> FormData:
    out = FormData()
    out.add_field("file", io.BytesIO(data), filename=filename, content_type=content_type)
    return out


async def upload(
    world: World, who: str, data: bytes, path: str = "/v2/account/picture", **kwargs: Any
) -> tuple[int, Any]:
    return await world.call(who, "PUT", path, data=form(data, **kwargs))


async def stored(world: World, who: str, target: str) -> tuple[Image.Image, str] | None:
    status, body = await world.call("org_admin", "GET", f"/v2/users/{world.id(target)}")
    assert status == 200, body
    user = body["user"]
    if "picture_base64" not in user:
        return None
    image = Image.open(io.BytesIO(base64.b64decode(user["picture_base64"])))
    return image, user["picture_content_type"]


@pytest.mark.parametrize(
    ("kind", "size", "expected"),
    [
        ("PNG", (300, 200), (256, 171)),
        ("JPEG", (100, 400), (64, 256)),
        ("PNG", (24, 24), (256, 256)),
        ("JPEG", (2000, 1000), (256, 128)),
    ],
)
async def test_pictures_are_scaled_to_256_on_the_longer_side(
    world: World, kind: str, size: tuple[int, int], expected: tuple[int, int]
) -> None:
    status, body = await upload(world, "member", image_bytes(kind, size))
    assert (status, body) == (200, {"message": "Success"})
    found = await stored(world, "org_admin", "member")
    assert found is not None
    image, content_type = found
    assert image.format == kind and image.size == expected
    assert content_type == {"PNG": "image/png", "JPEG": "image/jpeg"}[kind]


async def test_transparent_and_palette_pngs_are_kept_as_png(world: World) -> None:
    status, _ = await upload(world, "member", image_bytes("PNG", (64, 32), mode="RGBA"))
    assert status == 200
    found = await stored(world, "org_admin", "member")
    assert found is not None and found[0].mode == "RGBA" and found[0].size == (256, 128)
    status, _ = await upload(world, "member", image_bytes("PNG", (50, 50), mode="P"))
    assert status == 200


NOT_AN_IMAGE = "file: must be a JPEG or PNG image"


@pytest.mark.parametrize(
    ("data", "filename", "message"),
    [
        (image_bytes("PNG", (23, 23)), "small.png", "file: must be at least 24x24 pixels"),
        (image_bytes("PNG", (300, 23)), "thin.png", "file: must be at least 24x24 pixels"),
        (image_bytes("GIF", (64, 64), mode="P"), "anim.gif", NOT_AN_IMAGE),
        (image_bytes("BMP", (64, 64)), "photo.png", NOT_AN_IMAGE),
        (b"just some text, not a picture", "fake.png", NOT_AN_IMAGE),
        (b"", "empty.png", NOT_AN_IMAGE),
        (
            image_bytes("PNG", (300, 300))[:200],
            "cut.png",
            f"{NOT_AN_IMAGE} (this one could not be decoded)",
        ),
    ],
)
async def test_anything_but_a_decodable_jpeg_or_png_is_400(
    world: World, data: bytes, filename: str, message: str
) -> None:
    status, body = await upload(world, "member", data, filename=filename)
    assert (status, body) == (400, {"message": message})
    assert await stored(world, "org_admin", "member") is None


async def test_more_than_10_mb_is_400(world: World) -> None:
    big = image_bytes("PNG", (32, 32)) + os.urandom(10 * 1024 * 1024)
    status, body = await upload(world, "member", big)
    assert (status, body) == (400, {"message": "file: must be at most 10 MB"})


async def test_the_file_field_is_required_and_must_be_multipart(world: World) -> None:
    data = FormData()
    data.add_field("picture", image_bytes("PNG", (32, 32)), filename="x.png")
    status, body = await world.call("member", "PUT", "/v2/account/picture", data=data)
    assert (status, body) == (406, {"message": "file: is required"})
    status, body = await world.call("member", "PUT", "/v2/account/picture", json={"file": "x"})
    assert (status, body) == (400, {"message": "Content-Type must be multipart/form-data"})


async def test_delete_removes_the_picture(world: World) -> None:
    await upload(world, "member", image_bytes("PNG", (32, 32)))
    assert await stored(world, "org_admin", "member") is not None
    status, body = await world.call("member", "DELETE", "/v2/account/picture")
    assert (status, body) == (200, {"message": "Success"})
    assert await stored(world, "org_admin", "member") is None


async def test_pictures_appear_on_single_reads_only(world: World) -> None:
    await upload(world, "member", image_bytes("PNG", (32, 32)))
    status, body = await world.call("org_admin", "GET", "/v2/users")
    assert status == 200
    assert all("picture_base64" not in u for u in body["users"])


ADMIN_ROUTES = {  # the member's picture, changed by someone else: who may update the member
    "staff": 200,
    "staff_unscoped": 403,
    "org_admin": 200,
    "project_admin": 200,  # the member's home project
    "role_admin": 200,
    "org_user_perms": 200,
    "org_group_role_perms": 404,
    "org_project_perms": 404,
    "org_device_perms": 404,
    "project_user_perms": 200,
    "project_group_role_perms": 404,
    "project_device_perms": 404,
    "project_reader": 404,
    "project_updater": 404,
    "group_admin": 200,  # a member of Ward
    "group_user_perms": 200,
    "group_editor": 404,
    "group_device_perms": 404,
    "member": 200,  # themselves
    "holder": 404,
    "owner": 404,
    "plain": 404,
    "gemini_user": 404,
    "device_member": 404,  # not the member: a device
    "device_loner": 404,
    "device_boss": 200,
    "device_plain": 404,
    "other_admin": 404,
    "anonymous": 401,
}


@pytest.mark.parametrize(("who", "status"), table(ADMIN_ROUTES))
async def test_admin_picture_routes_by_role(world: World, who: str, status: int) -> None:
    path = f"/v2/users/{world.id('member')}/picture"
    got, body = await upload(world, who, image_bytes("JPEG", (40, 40)), path=path)
    assert got == status, body
    assert (await stored(world, "org_admin", "member") is not None) == (status == 200)
    got, body = await world.call(who, "DELETE", path)
    assert got == status, body


async def test_readers_may_not_change_a_picture(world: World) -> None:
    await world.grant(
        "org", world.tenant.org_id, world.id("plain"), user_permissions={"can_read": True}
    )
    path = f"/v2/users/{world.id('member')}/picture"
    status, body = await upload(world, "plain", image_bytes("PNG", (40, 40)), path=path)
    assert (status, body) == (403, {"message": "Not permitted to update this user"})


async def test_staff_have_no_account_picture(world: World) -> None:
    status, body = await upload(world, "staff", image_bytes("PNG", (40, 40)))
    assert (status, body) == (403, {"message": "Only user accounts have a profile picture here"})


async def test_a_body_that_is_not_the_encoding_it_claims_is_400(world: World) -> None:
    """aiohttp decodes `Content-Encoding` as the parts are read; garbage raised
    RequestPayloadError, which this reader did not expect: a 500."""
    headers = {
        "Content-Type": "multipart/form-data; boundary=b",
        "Content-Encoding": "deflate",
    }
    status, body = await world.call(
        "member", "PUT", "/v2/account/picture", data=b"not deflate", headers=headers
    )
    assert (status, body) == (400, {"message": "body: is not valid multipart/form-data"})


@pytest.mark.world(body_timeout=0.5)
@pytest.mark.parametrize(("who", "target"), [("member", None), ("org_admin", "member")])
async def test_a_multipart_body_that_stops_coming_is_408(
    world: World, who: str, target: str | None
) -> None:
    """The multipart reader was held to no timeout: a client that sent half a picture
    held its handler for as long as it kept the connection open (#35)."""
    path = f"/v2/users/{world.id(target)}/picture" if target else "/v2/account/picture"
    part = (
        '--b\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\n'
        "Content-Type: image/png\r\n\r\n\x89PNG"
    )
    head = (
        f"PUT {path} HTTP/1.1\r\nHost: edge\r\n"
        f"Authorization: Bearer {await world.token(who)}\r\n"
        "Content-Type: multipart/form-data; boundary=b\r\n"
        f"Content-Length: 100000\r\n\r\n{part}"
    )
    line = await wire.status_line(world.api, head.encode("latin-1"))
    assert line.startswith(b"HTTP/1.1 408 "), line
