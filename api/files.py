"""Files of a group, and the presigned URLs that carry their bytes (docs/files.md).

- GET    /v2/groups/{group_id}/files/{path}  token: can_read at the path (a cascade lists
                                             only what may be read); 308 with `redirect`
- PUT    /v2/groups/{group_id}/files/{path}  token: can_write for a new path, can_update over
                                             a file (legacy: can_write), plus can_delete when
                                             the group requires it; completing: the same,
                                             and only by whoever started the upload
- PATCH  /v2/groups/{group_id}/files/{path}  token: can_update (legacy: can_write)
- DELETE /v2/groups/{group_id}/files/{path}  token: can_delete (cascade: on every path below)
- PUT    /v2/presigned/groups/{group_id}/files/{path}  public: the URL's signature (an
                                             upload or a part; answers the ETag header)
- GET    /v2/presigned/groups/{group_id}/files/{path}  public: the URL's signature (the
                                             bytes, with Range and conditional requests)
Group admins (and project and org admins) may do everything; see edge/files/rights.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import ClientError, hdrs, web
from aiohttp.http_exceptions import HttpProcessingError

from api import bodies, listing, params
from api.downloads import BlobResponse
from api.keys import SERVICES
from api.responses import NO_STORE, json_response
from api.routing import PATH_SPAN, Route, principal
from api.schemas import STR, Schema, integer, obj
from edge.files import values
from edge.files.entries import ORDER, TABLE, ReadOptions, Redirect
from edge.files.signing import PREFIX
from edge.kernel.errors import ValidationError

_NUMBER: Schema = {"type": ["number", "null"], "minimum": -1e300, "maximum": 1e300}
_INDEX: dict[str, Schema] = {
    **{
        name: {**_NUMBER, "type": ["string", "number", "boolean", "null"], "maxLength": 1024}
        for name in values.UNICODE_FIELDS
    },
    **{name: _NUMBER for name in values.NUMBER_FIELDS},
}
# A file's path (edge/files/values.py): no control characters (C0, DEL, C1).
PATH: Schema = {
    "type": "string",
    "maxLength": values.MAX_PATH - 1,
    "pattern": "^[^\\x00-\\x1f\\x7f-\\x9f]*$",
}
PUT_FILES = obj(
    {
        **_INDEX,
        "expires_in": integer(1, values.MAX_EXPIRES_IN),
        "content_type": {
            "type": ["string", "null"],
            "maxLength": 255,
            "pattern": values.CONTENT_TYPE_PATTERN,
        },
        "num_parts": {"type": "integer", "minimum": 1},
        "completed_upload_id": STR,
        "etag_by_part": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": "^[0-9]+$"},
            "description": "The ETag each part's upload answered, by part number",
        },
    },
    title="PutFilesBody",
)
PUT_FILES["dependentRequired"] = {"etag_by_part": ["completed_upload_id"]}
_SERVER_SET: Schema = {
    "not": {},
    "description": "Set by the server from the uploaded bytes: sending it is a 400",
}
PATCH_FILES = obj(
    {**_INDEX, **dict.fromkeys(("size", "uploaded_date", "etag"), _SERVER_SET)},
    title="PatchFilesBody",
)
READ_OPTIONS = ("cascade", "paths_only", "redirect", "url_only", "info_only")
EXTRAS = (*READ_OPTIONS, "path_filter", "expires_in")
LISTABLE = listing.Listable("files", TABLE.kinds(), table=TABLE, extras=EXTRAS, default_order=ORDER)
# How far the body may be read ahead of the disk: the loop keeps reading while worker
# threads hash and write the batch before (a few such buffers per upload, whatever its size).
READ_AHEAD = 1 << 20
ONE = "/v2/groups/{group_id}/files/" + PATH_SPAN
PRESIGNED = PREFIX + "/{group_id}/files/" + PATH_SPAN


def _base(request: web.Request) -> str:
    """Where presigned URLs point: the public URL when set, else what the caller reached."""
    public = request.app[SERVICES].config.public_url
    return public.rstrip("/") if public else f"{request.scheme}://{request.host}"


async def get_files(request: web.Request) -> web.StreamResponse:
    services = request.app[SERVICES]
    query, extras = listing.parse(request.query, LISTABLE, services.cursors)
    options = ReadOptions(
        **{name: params.flag(extras, name) for name in READ_OPTIONS},
        path_filter=extras.get("path_filter"),
        expires_in=_expires_in(extras),
    )
    match = request.match_info
    found = await services.files.read(
        principal(request), match["group_id"], match["path"], query, options, _base(request)
    )
    if isinstance(found, Redirect):
        # The URL carries a signature that expires: no cache may keep it past that.
        return web.Response(status=308, headers={"Location": found.url, **NO_STORE})
    if isinstance(found, dict):
        return json_response(found)
    return listing.respond(found.key, found.page, query, services.cursors, LISTABLE.resource)


async def put_files(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PUT_FILES)
    match = request.match_info
    answer = await request.app[SERVICES].uploads.put(
        principal(request), match["group_id"], match["path"], body, _base(request)
    )
    return json_response(answer)


async def patch_files(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, PATCH_FILES)
    match = request.match_info
    await request.app[SERVICES].files.patch(
        principal(request), match["group_id"], match["path"], body
    )
    return json_response({"message": "Success"})


async def delete_files(request: web.Request) -> web.Response:
    match = request.match_info  # `cascade` alone, once: api/routing.py checked
    await request.app[SERVICES].files.delete(
        principal(request),
        match["group_id"],
        match["path"],
        cascade=params.flag(request.query, "cascade"),
    )
    return json_response({"message": "Success"})


async def upload(request: web.Request) -> web.Response:
    """A presigned PUT: the body is streamed to disk, never read whole (and not capped by
    max_body_bytes but by files_max_upload_bytes). A body with a Content-Encoding is refused:
    aiohttp would unpack it, and the file hold other bytes than were sent."""
    if request.headers.get(hdrs.CONTENT_ENCODING, "identity").strip().lower() != "identity":
        raise ValidationError("Content-Encoding", "an upload is kept as sent; send it without one")
    match = request.match_info
    etag = await request.app[SERVICES].uploads.receive(
        match["group_id"],
        match["path"],
        request.query,
        _chunks(request),
        request.content_length,
    )
    return web.Response(status=200, headers={"ETag": etag})


async def download(request: web.Request) -> web.StreamResponse:
    match = request.match_info
    found = await request.app[SERVICES].files.download(
        match["group_id"], match["path"], request.query
    )
    return BlobResponse(found, request.app[SERVICES].config.send_timeout)


async def _chunks(request: web.Request) -> AsyncIterator[bytes]:
    """The request body as it arrives, chunk by chunk as the transport read it (never joined:
    a join would copy every byte once more on the event loop); a connection that breaks off
    is the client's fault. An upload may take as long as its size needs, but a client that
    stops sending is a 408 after `body_timeout`, and so is one that trickles (under
    `body_min_rate` bytes a second over such a window; bodies.StallWatch): it must not hold
    its connection and its temporary file for ever.

    A request without a body (`Content-Length: 0`) has no chunks and is never read: aiohttp
    gives every such request the one `EMPTY_PAYLOAD` of the process, whose `readchunk`
    answers the end of the body once and then, for ever, an empty chunk that is not the end.
    Read, the first empty upload of the process ended and every later one looped on the
    event loop without yielding (no timer fired, nothing else ran, no answer came)."""
    await bodies.go_on(request)  # everything the body does not tell has been checked
    if not request.body_exists:
        return
    request.content.set_read_chunk_size(READ_AHEAD)
    watch = bodies.StallWatch(request)
    try:
        watch.waiting()
        async for chunk, _ in request.content.iter_chunks():
            watch.arrived(len(chunk))
            if chunk:
                yield chunk
            watch.waiting()
    except (ClientError, HttpProcessingError, ConnectionError) as exc:
        raise ValidationError("body", "the upload broke off before its end") from exc
    finally:
        watch.close()


def _expires_in(extras: dict[str, str]) -> int:
    if "expires_in" not in extras:
        return values.DEFAULT_EXPIRES_IN
    return params.integer("expires_in", extras["expires_in"], 1, values.MAX_EXPIRES_IN)


ROUTES = [
    Route(
        "GET",
        ONE,
        get_files,
        "token",
        "Get a file (or a subtree) with presigned download URLs; 308 with redirect",
        "files",
        query=("list", *LISTABLE.kinds, *EXTRAS),
        query_types={**LISTABLE.query_types(), "path": PATH},
        responses={200: "FilesAtPath", 308: "Redirect to a presigned URL"},
        operation_id="get_files_data",
    ),
    Route(
        "PUT",
        ONE,
        put_files,
        "token",
        "Start a single-part or multipart upload, or complete a multipart one",
        "files",
        body=PUT_FILES,
        responses={200: "FilesUrlForPath | Success"},
        operation_id="put_files_data",
        query_types={"path": PATH},
    ),
    Route(
        "PATCH",
        ONE,
        patch_files,
        "token",
        "Change a file's index fields",
        "files",
        body=PATCH_FILES,
        operation_id="patch_files_data",
        query_types={"path": PATH},
    ),
    Route(
        "DELETE",
        ONE,
        delete_files,
        "token",
        "Delete a file (cascade: a subtree) and its bytes",
        "files",
        query=("cascade",),
        operation_id="delete_files_data",
        query_types={"path": PATH},
    ),
    Route(
        "PUT",
        PRESIGNED,
        upload,
        "public",
        "Upload the bytes of a file or a part (a presigned URL; answers the ETag header)",
        "files",
        query=("expires", "rights", "upload_id", "part_number", "signature"),
        responses={200: "Stored: the ETag header holds the bytes' ETag"},
        response_type="",
        operation_id="upload_presigned",
        query_types={"path": PATH},
        errors=(403, 404, 408, 413),
        continue_later=True,
    ),
    Route(
        "GET",
        PRESIGNED,
        download,
        "public",
        "Download a file (a presigned URL; Range and conditional requests)",
        "files",
        query=("expires", "rights", "signature"),
        responses={200: "The file's bytes", 206: "A byte range", 304: "Not modified"},
        # The file's own type, which is application/octet-stream for a file given none (and
        # the type a generated client reads bytes of: it knows no `*/*`).
        response_type="*/* | application/octet-stream",
        operation_id="download_presigned",
        query_types={"path": PATH},
        errors=(403, 404, 412, 416),
    ),
    Route(
        "HEAD",
        PRESIGNED,
        download,
        "public",
        "A download's headers without its bytes (a presigned download URL serves HEAD too)",
        "files",
        query=("expires", "rights", "signature"),
        responses={200: "The file's headers", 206: "A byte range", 304: "Not modified"},
        response_type="application/octet-stream",
        operation_id="download_presigned_head",
        query_types={"path": PATH},
        errors=(403, 404, 412, 416),
    ),
]
