"""What a job is asked to be (docs/jobs.md): its targets, its rollout policy, its document
and its artifact, read from `POST /v2/jobs` and checked here, before anyone is asked who
may. Pure functions: no storage, no permissions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from edge.kernel import fields, json_text
from edge.kernel.errors import SchemaError, ValidationError

TARGET_KINDS = ("device_ids", "group_id", "project_id", "tags")
MAX_DOCUMENT_BYTES = 32 * 1024
MAX_TIMEOUT = 7 * 86400
DEFAULT_TIMEOUT = 3600
MAX_RETRIES = 10
MAX_RATE = 100_000
ARTIFACT = "artifact"  # the key of the document where a device finds its download
BODY_FIELDS = frozenset(
    {"description", "document", "targets", "continuous", "project_id", "artifact", "policy"}
)
POLICY_FIELDS = frozenset(
    {
        "max_per_minute",
        "max_in_progress",
        "abort_percent",
        "abort_min_finished",
        "timeout_seconds",
        "max_retries",
    }
)


@dataclass(frozen=True)
class Policy:
    """The rollout policy: None leaves a limit off."""

    max_per_minute: int | None = None
    max_in_progress: int | None = None
    abort_percent: int | None = None
    abort_min_finished: int = 1
    timeout_seconds: int = DEFAULT_TIMEOUT
    max_retries: int = 0

    def as_row(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in sorted(POLICY_FIELDS)}

    def should_abort(self, finished: int, failed: int) -> bool:
        """More than `abort_percent` % of at least `abort_min_finished` finished failed."""
        if self.abort_percent is None or finished < self.abort_min_finished:
            return False
        return failed * 100 > self.abort_percent * finished


@dataclass(frozen=True)
class Targets:
    kind: str
    device_ids: tuple[str, ...] = ()
    group_id: str | None = None
    project_id: str | None = None
    tags: tuple[str, ...] = ()

    def as_row(self) -> dict[str, Any]:
        value: Any = {
            "device_ids": list(self.device_ids),
            "group_id": self.group_id,
            "project_id": self.project_id,
            "tags": list(self.tags),
        }[self.kind]
        return {self.kind: value}


@dataclass(frozen=True)
class Request:
    """A job as asked, checked."""

    description: str
    document: dict[str, Any]
    targets: Targets
    continuous: bool
    project_id: str | None
    artifact: tuple[str, str] | None  # (group ID, path)
    policy: Policy


def parse(body: Mapping[str, Any], max_targets: int) -> Request:
    unknown = sorted(set(body) - BODY_FIELDS)
    if unknown:
        raise SchemaError(f"{unknown[0]}: is not a field of a job")
    targets = _targets(body.get("targets"), max_targets)
    continuous = fields.boolean("continuous", body.get("continuous", False))
    if continuous and targets.kind == "device_ids":
        raise ValidationError("continuous", "applies to a group, a project or tags")
    artifact = _artifact(body.get("artifact"))
    document = _document(body.get("document"), artifact is not None)
    project = body.get("project_id")
    if project is not None and (not isinstance(project, str) or not project):
        raise ValidationError("project_id", "must be a project's ID")
    if project is not None and targets.project_id not in (None, project):
        raise ValidationError("project_id", "a project job's project is its target")
    return Request(
        description=fields.description("description", body.get("description", "")),
        document=document,
        targets=targets,
        continuous=continuous,
        project_id=project or targets.project_id,
        artifact=artifact,
        policy=policy(body.get("policy")),
    )


def _targets(raw: Any, max_targets: int) -> Targets:
    given = fields.mapping("targets", raw)
    if len(given) != 1 or next(iter(given)) not in TARGET_KINDS:
        raise ValidationError("targets", f"give exactly one of {', '.join(TARGET_KINDS)}")
    kind, value = next(iter(given.items()))
    if kind in ("group_id", "project_id"):
        if not isinstance(value, str) or not value:
            raise ValidationError(f"targets.{kind}", "must be an ID")
        if kind == "group_id":
            return Targets(kind, group_id=value)
        return Targets(kind, project_id=value)
    if kind == "tags":
        tags = fields.tags("targets.tags", value)
        if not tags:
            raise ValidationError("targets.tags", "give at least one tag")
        return Targets(kind, tags=tuple(tags))
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValidationError("targets.device_ids", "must be a list of device IDs")
    unique = tuple(dict.fromkeys(value))
    if not unique or len(unique) > max_targets:
        raise ValidationError("targets.device_ids", f"give 1 to {max_targets} device IDs")
    return Targets(kind, device_ids=unique)


def _artifact(raw: Any) -> tuple[str, str] | None:
    if raw is None:
        return None
    given = fields.mapping("artifact", raw)
    if set(given) != {"group_id", "path"}:
        raise ValidationError("artifact", "give group_id and path (a file of the group)")
    group, path = given["group_id"], given["path"]
    if not isinstance(group, str) or not group or not isinstance(path, str) or not path:
        raise ValidationError("artifact", "group_id and path must be strings")
    return group, path if path.startswith("/") else "/" + path


def _document(raw: Any, with_artifact: bool) -> dict[str, Any]:
    document = fields.mapping("document", raw)
    json_text.check(document, field="document")
    size = len(json.dumps(document).encode())
    if size > MAX_DOCUMENT_BYTES:
        raise ValidationError("document", f"must be at most {MAX_DOCUMENT_BYTES} bytes of JSON")
    if with_artifact and ARTIFACT in document:
        raise ValidationError(
            "document.artifact", "is where devices find the artifact's URL: use another key"
        )
    return document


def policy(raw: Any) -> Policy:
    given = fields.mapping("policy", {} if raw is None else raw)
    unknown = sorted(set(given) - POLICY_FIELDS)
    if unknown:
        raise ValidationError(f"policy.{unknown[0]}", "is not a rule of a rollout policy")

    def number(name: str, low: int, high: int) -> int | None:
        value = given.get(name)
        return None if value is None else fields.integer(f"policy.{name}", value, low, high)

    percent = number("abort_percent", 0, 100)
    return Policy(
        max_per_minute=number("max_per_minute", 1, MAX_RATE),
        max_in_progress=number("max_in_progress", 1, MAX_RATE),
        abort_percent=percent,
        abort_min_finished=number("abort_min_finished", 1, MAX_RATE) or 1,
        timeout_seconds=number("timeout_seconds", 1, MAX_TIMEOUT) or DEFAULT_TIMEOUT,
        max_retries=number("max_retries", 0, MAX_RETRIES) or 0,
    )


def stored_policy(row: Mapping[str, Any]) -> Policy:
    return Policy(**{name: row[name] for name in POLICY_FIELDS if name in row})
