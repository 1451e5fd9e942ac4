"""Group data: JSON documents at paths. Every route needs a token (a user's access token
or a device's API key); the data service checks each path against the caller's data
grants (docs/data.md, docs/permissions.md).

- GET    /v2/groups/{group_id}/data/{path}   read at the path; `cascade`: read, checked
                                             per entry below (entries not readable are
                                             left out)
- PUT    /v2/groups/{group_id}/data/{path}   create (`can_write`) or replace (`can_update`;
                                             legacy: `can_write`), plus `can_delete` when
                                             the group requires delete to put
- POST   /v2/groups/{group_id}/data/{path}   create only (`can_write`); 409 if it exists
- PATCH  /v2/groups/{group_id}/data/{path}   merge into an entry (`can_update`; legacy:
                                             `can_write`); 404 if it does not exist
- DELETE /v2/groups/{group_id}/data/{path}   `can_delete`; `cascade`: on the whole subtree
PUT, PATCH and DELETE of one entry take `If-Match` (the ETag of a single GET; also needs
`can_read`): made only while the path holds that entry at that revision, else 409.
- POST   /v2/groups/{group_id}/data          bulk: one method, many paths, each checked
                                             as above; writes all or nothing
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from api import bodies, listing, params, preconditions, schemas
from api.keys import SERVICES
from api.responses import json_response
from api.routing import PATH_SPAN, Route, principal
from api.schemas import BOOL, Schema, obj
from edge.access.values import MAX_PATH
from edge.data import json_rules, versions
from edge.data import query as data_query
from edge.data.query import (
    FLAGS,
    MAX_PATTERN,
    NUMBER_FIELDS,
    OPS,
    SEARCHABLE,
    TEXTS,
    UNICODE_FIELDS,
    WALKS,
)
from edge.data.uploads import MAX_INDEX_TEXT
from edge.kernel.errors import ValidationError

SUCCESS = {"message": "Success"}
ANY: Schema = {}
_INT64 = 2**63
_NUMBER: Schema = {"type": ["number", "null"], "minimum": -_INT64, "maximum": _INT64 - 1}
_INDEX: dict[str, Schema] = {
    **{  # a number is stored as its JSON spelling, of any size (edge/data/uploads.py)
        name: {"type": ["string", "number", "boolean", "null"], "maxLength": MAX_INDEX_TEXT}
        for name in UNICODE_FIELDS
    },
    **{name: _NUMBER for name in NUMBER_FIELDS},
}
_SEGMENT = "[^/\\x00-\\x1f\\x7f-\\x9f]+"
# A data path (edge/data/paths.py): segments never empty, '.' or '..', no control characters.
PATH: Schema = {
    "type": "string",
    "maxLength": MAX_PATH - 1,
    "pattern": f"^{_SEGMENT}(/{_SEGMENT})*$",
    "description": "Segments separated by '/', never empty, '.' or '..'",
}
PATHS: Schema = {  # in a body, a leading '/' and one trailing '/' may be added
    "type": "array",
    "items": {**PATH, "pattern": f"^/?({_SEGMENT}(/{_SEGMENT})*/?)?$"},
    "minItems": 1,
    "uniqueItems": True,
}
UPLOAD = obj({"value": ANY, **_INDEX}, ("value",), title="UploadDataBody")
PATCH = obj({"value": ANY, **_INDEX}, title="PatchDataBody")
FILTER_NAMES = tuple(
    f"{name}{sep}{op}" if op != "eq" else name
    for name, ops in OPS.items()
    for op in ops
    for sep in ("_", ".")
)
QUERY = (*FLAGS, *TEXTS, *dict.fromkeys(FILTER_NAMES))
_KINDS = {
    **dict.fromkeys(UNICODE_FIELDS, "text"),
    **dict.fromkeys(NUMBER_FIELDS, "number"),
    **dict.fromkeys(("created_by", "last_updated_by"), "id"),
    **dict.fromkeys(("created_date", "last_updated_date"), "datetime"),
}
QUERY_TYPES: dict[str, Schema] = {
    "order_by": listing.order_by(WALKS),
    "path_filter": {"type": "string", "format": "regex", "maxLength": MAX_PATTERN},
    "search_fields": listing.names_of(SEARCHABLE),
    **{
        name if op == "eq" else f"{name}_{op}": listing.KIND_TYPES[
            "text" if op in ("sw", "contains") else _KINDS[name]
        ]
        for name, ops in OPS.items()
        for op in ops
    },
}
_LOOSE: Schema = {"type": ["string", "number", "boolean", "null"]}
GET_JOB = obj(
    {
        "paths": PATHS,
        **{name: _LOOSE for name in (*FLAGS, *TEXTS, *FILTER_NAMES)},
        "last_evaluated_key": {"type": ["string", "object", "null"]},
    },
    ("paths",),
    title="GetDataJob",
)
_UPLOAD_JOB = obj(
    {"paths": PATHS, "value": ANY, **_INDEX}, ("paths", "value"), title="UploadDataJob"
)
JOBS: dict[str, Schema] = {
    "GET": GET_JOB,
    "PUT": _UPLOAD_JOB,
    "POST": _UPLOAD_JOB,
    "PATCH": obj({"paths": PATHS, "value": ANY, **_INDEX}, ("paths",), title="PatchDataJob"),
    "DELETE": obj({"paths": PATHS, "cascade": BOOL}, ("paths",), title="DeleteDataJob"),
}
_BULK_BY_METHOD = {
    method: obj(
        {
            "method": {"type": "string", "const": method},
            "jobs": {"type": "array", "items": job, "minItems": 1},
        },
        ("method", "jobs"),
        title=f"Bulk{method.capitalize()}Body",
    )
    for method, job in JOBS.items()
}
# The body as the SDK has it; each method's jobs are checked by bulk_data (_BULK_BY_METHOD).
BULK = {
    **obj(
        {
            "method": {"type": "string", "enum": list(JOBS)},
            "jobs": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "anyOf": list({id(j): j for j in JOBS.values()}.values()),
                },
            },
        },
        ("method", "jobs"),
        title="BulkDataBody",
    ),
    "allOf": [
        {
            "if": {"properties": {"method": {"const": method}}},
            "then": {"properties": {"jobs": {"items": job}}},
        }
        for method, job in JOBS.items()
    ],
}


async def read_body(request: web.Request, schema: Schema) -> dict[str, Any]:
    """The shared body reader, with the data routes' larger body limit."""
    limit = request.app[SERVICES].config.data_max_body_bytes()
    # A value sits inside the body (bulk: two levels in), so the body may nest deeper than
    # the value's own limit, which edge/data/json_rules.py applies with the field's name.
    depth = json_rules.MAX_DEPTH + 2
    return await bodies.read_json(request, schema, max_bytes=limit, max_depth=depth)


def _where(request: web.Request) -> tuple[str, str]:
    return request.match_info["group_id"], request.match_info["path"]


async def get_data(request: web.Request) -> web.Response:
    query = data_query.parse(params.single_values(request.query))
    group_id, path = _where(request)
    body = await request.app[SERVICES].data.get(principal(request), group_id, path, query)
    return json_response(body, headers=_etag(body))


def _etag(body: dict[str, Any]) -> dict[str, str] | None:
    """One entry's version (revision and incarnation, edge/data/versions.py) as its ETag,
    for `If-Match` on a later write (an extension)."""
    entry = body.get("data")
    if not isinstance(entry, dict) or not isinstance(entry.get("revision"), int):
        return None
    by, date = entry.get("created_by"), entry.get("created_date")
    if not isinstance(by, str) or not isinstance(date, str):
        return None
    incarnation = versions.incarnation(by, date)
    return {"ETag": f'"{versions.Version(entry["revision"], incarnation).tag}"'}


def _if_version(request: web.Request) -> versions.Version | None:
    """The version `If-Match` names: the whole ETag a single GET gave (a bare revision
    cannot tell an entry created again from the one read, so it is refused)."""
    text = preconditions.if_match_text(request)
    if text is None:
        return None
    version = versions.parse(text)
    if version is None:
        raise ValidationError(
            "If-Match", 'must be the entry\'s ETag, as a single GET gives it ("7-0a1b2c3d")'
        )
    return version


async def put_data(request: web.Request) -> web.Response:
    expected = _if_version(request)
    body = await read_body(request, UPLOAD)
    await request.app[SERVICES].data.put(principal(request), *_where(request), body, expected)
    return json_response(SUCCESS)


async def post_data(request: web.Request) -> web.Response:
    body = await read_body(request, UPLOAD)
    await request.app[SERVICES].data.post(principal(request), *_where(request), body)
    return json_response(SUCCESS, status=201)


async def patch_data(request: web.Request) -> web.Response:
    expected = _if_version(request)
    body = await read_body(request, PATCH)
    await request.app[SERVICES].data.patch(principal(request), *_where(request), body, expected)
    return json_response(SUCCESS)


async def delete_data(request: web.Request) -> web.Response:
    cascade = params.flag(request.query, "cascade")  # the route's only one (api/routing.py)
    expected = _if_version(request)
    if cascade and expected is not None:
        raise ValidationError("If-Match", "names one entry's version: not with cascade")
    group_id, path = _where(request)
    data = request.app[SERVICES].data
    await data.delete(principal(request), group_id, path, cascade=cascade, expected=expected)
    return json_response(SUCCESS)


async def bulk_data(request: web.Request) -> web.Response:
    body = await read_body(request, BULK)
    method = str(body["method"]).upper()
    if method in _BULK_BY_METHOD:
        schemas.validate(_BULK_BY_METHOD[method], body)
    data = request.app[SERVICES].data
    group_id = request.match_info["group_id"]
    found = await data.bulk.run(principal(request), group_id, method, body["jobs"])
    if found is not None:
        return json_response(found)
    return json_response(SUCCESS, status=201 if method == "POST" else 200)


_ONE = "/v2/groups/{group_id}/data/" + PATH_SPAN
_IF_MATCH = {  # an extension (docs/data.md, "Conditional writes")
    "If-Match": "Edge's own: the entry's ETag as a single GET gave it (`\"7-0a1b2c3d\"`:"
    " its revision and which incarnation of the entry); the write is made only while it is"
    " that entry at that revision, else 409",
}
# What the server takes (api/preconditions.py): the ETag, quoted and strong (a weak one
# never matches: a 400), or `*`.
_IF_MATCH_TYPE = {"If-Match": {"type": "string", "pattern": r'^(\*|"[0-9]{1,18}-[0-9a-f]{8}")$'}}
_TAG = "data"
ROUTES = [
    Route(
        "GET",
        _ONE,
        get_data,
        "token",
        "Read the entry at a path, or its subtree (cascade)",
        _TAG,
        query=QUERY,
        query_types={**QUERY_TYPES, "path": PATH},
        responses={200: "DataAtPath"},
        operation_id="get_json_data",
    ),
    Route(
        "PUT",
        _ONE,
        put_data,
        "token",
        "Store a value at a path (If-Match: the entry's ETag, for a conditional write)",
        _TAG,
        body=UPLOAD,
        operation_id="put_json_data",
        query_types={"path": PATH},
        errors=(409,),
        headers=_IF_MATCH,
        header_types=_IF_MATCH_TYPE,
    ),
    Route(
        "POST",
        _ONE,
        post_data,
        "token",
        "Create an entry (never overwrites)",
        _TAG,
        body=UPLOAD,
        responses={201: "Success"},
        operation_id="post_json_data",
        query_types={"path": PATH},
        errors=(409,),
    ),
    Route(
        "PATCH",
        _ONE,
        patch_data,
        "token",
        "Merge into an entry (If-Match: the entry's ETag, for a conditional write)",
        _TAG,
        body=PATCH,
        operation_id="patch_json_data",
        query_types={"path": PATH},
        errors=(409,),
        headers=_IF_MATCH,
        header_types=_IF_MATCH_TYPE,
    ),
    Route(
        "DELETE",
        _ONE,
        delete_data,
        "token",
        "Delete an entry, or its subtree (cascade; If-Match: the entry's ETag, without cascade)",
        _TAG,
        query=("cascade",),
        operation_id="delete_json_data",
        query_types={"path": PATH},
        errors=(409,),
        headers=_IF_MATCH,
        header_types=_IF_MATCH_TYPE,
    ),
    Route(
        "POST",
        "/v2/groups/{group_id}/data",
        bulk_data,
        "token",
        "Bulk GET, PUT, POST, PATCH or DELETE of many paths (writes: all or nothing)",
        _TAG,
        body=BULK,
        responses={200: "DataByPath | Success", 201: "Success"},
        operation_id="bulk_json_data_request",
        errors=(409,),
    ),
]
