"""Rollout jobs (docs/jobs.md), an extension beyond the interface.

- POST   /v2/jobs                                 users (and scoped staff) who may update
                                                  every target device and read the artifact;
                                                  409 past a running-job share (the org's,
                                                  the maker's, the project's, the admins'
                                                  reserve), 429 past jobs_create_per_hour
- GET    /v2/jobs                                 the jobs the caller may read (the shared
                                                  list conventions)
- GET    /v2/jobs/{job_id}                        org admins, admins of its project, its
                                                  creator; with counts per execution state
- GET    /v2/jobs/{job_id}/executions             the same callers (list conventions)
- GET    /v2/jobs/{job_id}/executions/{device_id} the same callers
- POST   /v2/jobs/{job_id}/cancel                 the same callers; `force` also cancels
                                                  the executions in progress
- DELETE /v2/jobs/{job_id}                        the same callers; a running job needs
                                                  `force`
- GET    /v2/devices/{device_id}/executions       people who may read the device: its
                                                  executions of the jobs they may list
                                                  (as GET /v2/jobs; none: an empty list),
                                                  newest first (list conventions)
- GET    /v2/devices/{device_id}/jobs             the device itself (its API key): its
                                                  pending executions
- GET    /v2/devices/{device_id}/jobs/{job_id}    the device itself: the execution and its
                                                  document (with the artifact's URL)
- PATCH  /v2/devices/{device_id}/jobs/{job_id}    the device itself: its update (409 with
                                                  the current `version` on a conflict)
"""

from __future__ import annotations

from aiohttp import web

from api import bodies, listing, params
from api.keys import SERVICES
from api.model_fields import page
from api.responses import json_response
from api.routing import Route, principal
from api.schemas import BOOL, INT, OBJECT, STR, TAG_LIST, Schema, integer, obj, text
from edge.jobs import rules
from edge.jobs.executions import DEVICE_STATES, MAX_DETAILS_BYTES
from edge.jobs.service import DEVICE_EXECUTION_TABLE, EXECUTION_TABLE, TABLE
from edge.jobs.views import EXECUTION_STATES as STATES
from edge.kernel import fields
from edge.services import Services

JOB_STATES = ("SCHEDULED", "IN_PROGRESS", "COMPLETED", "CANCELED", "ABORTED")
LISTABLE = listing.Listable("jobs", TABLE.kinds(), table=TABLE)
# Executions are states and numbers, no text: `search` is a 400 on both lists of them.
EXECUTIONS = listing.Listable(
    "job_executions",
    EXECUTION_TABLE.kinds(),
    table=EXECUTION_TABLE,
    default_order="queued_date",
    searchable=False,
)
DEVICE_EXECUTIONS = listing.Listable(
    "device_job_executions",
    DEVICE_EXECUTION_TABLE.kinds(),
    table=DEVICE_EXECUTION_TABLE,
    default_order="queued_date",
    default_desc=True,
    searchable=False,
)
_COUNT: Schema = integer(0, rules.MAX_RATE)
_ID: Schema = {"type": "string", "minLength": 1}
_TARGETS: Schema = {
    "title": "JobTargets",
    "description": "Exactly one of: device IDs, a group, a project, tags (any of them)",
    "oneOf": [
        obj({"device_ids": {"type": "array", "items": _ID, "minItems": 1}}, ("device_ids",)),
        obj({"group_id": _ID}, ("group_id",)),
        obj({"project_id": _ID}, ("project_id",)),
        obj(
            {
                "tags": {
                    **TAG_LIST,
                    "items": {**TAG_LIST["items"], "pattern": "\\S"},
                    "minItems": 1,
                }
            },
            ("tags",),
        ),
    ],
}
CREATE_JOB: Schema = {
    **obj(
        {
            "description": text(fields.MAX_DESCRIPTION, required=False),
            "document": OBJECT,
            "targets": _TARGETS,
            "continuous": BOOL,
            "project_id": _ID,
            "artifact": obj(
                {"group_id": _ID, "path": _ID}, ("group_id", "path"), title="ArtifactReference"
            ),
            "policy": obj(
                {
                    "max_per_minute": integer(1, rules.MAX_RATE),
                    "max_in_progress": integer(1, rules.MAX_RATE),
                    "abort_percent": integer(0, 100),
                    "abort_min_finished": integer(1, rules.MAX_RATE),
                    "timeout_seconds": integer(1, rules.MAX_TIMEOUT),
                    "max_retries": integer(0, rules.MAX_RETRIES),
                },
                title="RolloutPolicy",
            ),
        },
        ("document", "targets"),
        title="CreateJobBody",
    ),
    # Rules between fields: a list of devices is a snapshot; a document given with an
    # artifact leaves `artifact` for the server to fill in.
    "allOf": [
        {
            "if": {"properties": {"targets": {"required": ["device_ids"]}}},
            "then": {"properties": {"continuous": {"const": False}}},
        },
        {
            "if": {"required": ["artifact"]},
            "then": {"properties": {"document": {"not": {"required": ["artifact"]}}}},
        },
    ],
}
CANCEL_JOB = obj({"force": BOOL}, title="CancelJobBody")
UPDATE_EXECUTION = obj(
    {
        "state": {"type": "string", "enum": list(DEVICE_STATES)},
        "status_details": OBJECT,
        "progress": integer(0, 100),
        "expected_version": integer(1, 1 << 62),
        "client_token": {"type": "string", "maxLength": 64},
    },
    ("state",),
    title="UpdateJobExecutionBody",
)
_DATE: Schema = {"type": "string", "format": "date-time"}
_JOB_STATE: Schema = {"type": "string", "enum": list(JOB_STATES)}
_EXECUTION_FIELDS: dict[str, Schema] = {
    "job_id": STR,
    "device_id": STR,
    "state": {"type": "string", "enum": list(STATES)},
    "status_details": {**OBJECT, "description": f"At most {MAX_DETAILS_BYTES} bytes"},
    "progress": integer(0, 100),
    "version": INT,
    "attempts": INT,
    "queued_date": _DATE,
    "released_date": _DATE,
    "started_date": _DATE,
    "last_updated_date": _DATE,
    "finished_date": _DATE,
    "deadline": _DATE,
}
_EXECUTION: Schema = obj(
    _EXECUTION_FIELDS,
    ("job_id", "device_id", "state", "status_details", "progress", "version"),
    title="JobExecution",
)
_JOB: Schema = obj(
    {
        "id": STR,
        "org_id": STR,
        "project_id": STR,
        "description": STR,
        "document": OBJECT,
        "targets": OBJECT,
        "continuous": BOOL,
        "artifact": OBJECT,
        "policy": OBJECT,
        "state": _JOB_STATE,
        "reason": STR,
        "counts": obj({state: INT for state in STATES}),
        "created_date": _DATE,
        "created_by": STR,
        "last_updated_date": _DATE,
        "completed_date": _DATE,
    },
    ("id", "org_id", "document", "targets", "continuous", "policy", "state", "created_date"),
    title="Job",
)
_SUMMARY: Schema = obj(
    {
        k: _EXECUTION_FIELDS[k]
        for k in ("job_id", "state", "version", "queued_date", "last_updated_date")
    },
    ("job_id", "state", "version"),
    title="PendingJobExecution",
)
MODELS: dict[str, Schema] = {
    "ExecutionConflict": obj(
        {"message": STR, "version": INT},
        ("message", "version"),
        title="ExecutionConflict",
    ),
    "Job": _JOB,
    "JobInfo": obj({"job": _JOB}, ("job",)),
    "JobList": page("A page of rollout jobs", "jobs", "Job"),
    "JobExecution": _EXECUTION,
    "JobExecutionInfo": obj({"execution": _EXECUTION}, ("execution",)),
    "JobExecutionList": page("A page of a job's executions", "executions", "JobExecution"),
    "DeviceExecution": obj(
        {**_EXECUTION_FIELDS, "job_description": STR, "job_state": _JOB_STATE},
        _EXECUTION["required"],
        title="DeviceExecution",
    ),
    "DeviceExecutionList": page(
        "A page of a device's job executions", "executions", "DeviceExecution"
    ),
    "DeviceJobExecutionInfo": obj(
        {
            "execution": {
                **_EXECUTION,
                "properties": {**_EXECUTION["properties"], "document": OBJECT},
            }
        },
        ("execution",),
    ),
    "DeviceJobList": obj({"jobs": {"type": "array", "items": _SUMMARY}}, ("jobs",)),
}


def _services(request: web.Request) -> Services:
    return request.app[SERVICES]


async def create_job(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CREATE_JOB)
    job = await _services(request).jobs.create(principal(request), body)
    return json_response({"job": job}, status=201)


async def list_jobs(request: web.Request) -> web.Response:
    services = _services(request)
    query, _ = listing.parse(request.query, LISTABLE, services.cursors)
    page = await services.jobs.list(principal(request), query)
    return listing.respond("jobs", page, query, services.cursors, LISTABLE.resource)


async def get_job(request: web.Request) -> web.Response:
    job = _services(request).jobs.get(principal(request), request.match_info["job_id"])
    return json_response({"job": job})


async def list_job_executions(request: web.Request) -> web.Response:
    services = _services(request)
    query, _ = listing.parse(request.query, EXECUTIONS, services.cursors)
    job_id = request.match_info["job_id"]
    page = await services.jobs.executions(principal(request), job_id, query)
    return listing.respond("executions", page, query, services.cursors, EXECUTIONS.resource)


async def list_device_executions(request: web.Request) -> web.Response:
    services = _services(request)
    query, _ = listing.parse(request.query, DEVICE_EXECUTIONS, services.cursors)
    device_id = request.match_info["device_id"]
    page = await services.jobs.of_device(principal(request), device_id, query)
    return listing.respond("executions", page, query, services.cursors, DEVICE_EXECUTIONS.resource)


async def get_job_execution(request: web.Request) -> web.Response:
    info = request.match_info
    found = _services(request).jobs.execution(principal(request), info["job_id"], info["device_id"])
    return json_response({"execution": found})


async def cancel_job(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, CANCEL_JOB)
    job_id = request.match_info["job_id"]
    force = bool(body.get("force", False))
    job = await _services(request).jobs.cancel(principal(request), job_id, force)
    return json_response({"job": job})


async def delete_job(request: web.Request) -> web.Response:
    force = params.flag(request.query, "force")
    await _services(request).jobs.delete(principal(request), request.match_info["job_id"], force)
    return json_response({"message": "Success"})


async def list_device_jobs(request: web.Request) -> web.Response:
    jobs = _services(request).device_jobs
    device = jobs.own(principal(request), request.match_info["device_id"])
    return json_response(jobs.pending(device.id))


async def get_device_job(request: web.Request) -> web.Response:
    jobs = _services(request).device_jobs
    device = jobs.own(principal(request), request.match_info["device_id"])
    return json_response({"execution": jobs.get(device.id, request.match_info["job_id"])})


async def update_device_job(request: web.Request) -> web.Response:
    body = await bodies.read_json(request, UPDATE_EXECUTION)
    jobs = _services(request).device_jobs
    device = jobs.own(principal(request), request.match_info["device_id"])
    execution = await jobs.update(device.id, request.match_info["job_id"], body)
    return json_response({"execution": execution})


_JOB_PATH = "/v2/jobs/{job_id}"
_DEVICE_JOB = "/v2/devices/{device_id}/jobs/{job_id}"
ROUTES = [
    Route(
        "POST",
        "/v2/jobs",
        create_job,
        "token",
        "Create a rollout job over devices (a snapshot, or continuous)",
        "jobs",
        body=CREATE_JOB,
        responses={201: "JobInfo"},
        errors=(404, 409, 429),
        extension=True,
    ),
    Route(
        "GET",
        "/v2/jobs",
        list_jobs,
        "token",
        "List the rollout jobs the caller may read",
        "jobs",
        query=("list", *LISTABLE.kinds),
        query_types=LISTABLE.query_types(),
        responses={200: "JobList"},
        extension=True,
    ),
    Route(
        "GET",
        _JOB_PATH,
        get_job,
        "token",
        "Get a rollout job, with its executions counted by state",
        "jobs",
        responses={200: "JobInfo"},
        extension=True,
    ),
    Route(
        "GET",
        f"{_JOB_PATH}/executions",
        list_job_executions,
        "token",
        "List a job's executions, one per target device",
        "jobs",
        query=(*EXECUTIONS.common(), *EXECUTIONS.kinds),
        query_types=EXECUTIONS.query_types(),
        responses={200: "JobExecutionList"},
        extension=True,
    ),
    Route(
        "GET",
        f"{_JOB_PATH}/executions/{{device_id}}",
        get_job_execution,
        "token",
        "Get one device's execution of a job",
        "jobs",
        responses={200: "JobExecutionInfo"},
        extension=True,
    ),
    Route(
        "POST",
        f"{_JOB_PATH}/cancel",
        cancel_job,
        "token",
        "Cancel a running job (force: its executions in progress too)",
        "jobs",
        body=CANCEL_JOB,
        responses={200: "JobInfo"},
        errors=(409,),
        extension=True,
    ),
    Route(
        "DELETE",
        _JOB_PATH,
        delete_job,
        "token",
        "Delete a job and its executions (a running one with force)",
        "jobs",
        query=("force",),
        errors=(409,),
        extension=True,
    ),
    Route(
        "GET",
        "/v2/devices/{device_id}/executions",
        list_device_executions,
        "token",
        "A device's job executions, newest first, of the jobs the caller may list",
        "jobs",
        query=(*DEVICE_EXECUTIONS.common(), *DEVICE_EXECUTIONS.kinds),
        query_types=DEVICE_EXECUTIONS.query_types(),
        responses={200: "DeviceExecutionList"},
        extension=True,
    ),
    Route(
        "GET",
        "/v2/devices/{device_id}/jobs",
        list_device_jobs,
        "token",
        "A device's pending job executions (the device itself)",
        "devices",
        responses={200: "DeviceJobList"},
        extension=True,
    ),
    Route(
        "GET",
        _DEVICE_JOB,
        get_device_job,
        "token",
        "A device's execution of a job, with the job's document (the device itself)",
        "devices",
        responses={200: "DeviceJobExecutionInfo"},
        extension=True,
    ),
    Route(
        "PATCH",
        _DEVICE_JOB,
        update_device_job,
        "token",
        "Update a device's execution of a job (the device itself)",
        "devices",
        body=UPDATE_EXECUTION,
        responses={200: "DeviceJobExecutionInfo", 409: "ExecutionConflict"},
        extension=True,
    ),
]
