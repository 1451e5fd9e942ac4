"""E-mail templates: the texts of invitation and account-recovery mail, per org or project.

Who may do what (docs/messaging.md):

- org admins: every template of the org, org-level and project-level;
- project admins: the templates of their project (create, read, list, update, delete);
- everyone else: nothing (a template they cannot manage is "not found").
- `force` on a delete-protected template: the same admins (only admins manage templates).

Texts are checked when written: a `{{ name }}` that is neither a known variable nor one of
the template's `custom_args` is refused with a 400 naming it (edge/delivery/templating.py).
"""

from __future__ import annotations

import json
from typing import Any

from edge.access.engine import Caller, Permissions
from edge.delivery import templating
from edge.kernel import clock, fields, ids
from edge.kernel.errors import DeleteProtected, Denied, NotFound, ValidationError
from edge.kernel.listing import CursorCodec, ListQuery, Page, fetch
from edge.kernel.principal import Principal
from edge.tenancy.settings import check_project, require_org
from storage import email_templates as store
from storage.database import Database

TABLE = store.LIST
Row = dict[str, Any]
MAX_SUBJECT = 998
MAX_BODY = 200_000
TEXTS = ("subject", "body_txt", "body_html")
FLAGS = ("for_account_recovery", "for_new_users", "is_delete_protected", "is_active")


class EmailTemplates:
    def __init__(self, db: Database, cursors: CursorCodec, permissions: Permissions) -> None:
        self._db = db
        self.cursors = cursors
        self._permissions = permissions

    def get(self, principal: Principal, template_id: str) -> Row:
        return present(self._load(principal, template_id)[0])

    async def list(self, principal: Principal, query: ListQuery) -> Page:
        org_id = require_org(principal)
        held = self._permissions.caller(principal)
        projects = None if held.is_org_admin else held.admin_projects()
        if projects is not None and not projects:
            raise Denied("Only org and project admins may list e-mail templates")
        page = await fetch(
            self._db, TABLE, query, *store.visible(org_id, principal.project_id, projects)
        )
        page.rows = [present(row) for row in page.rows]
        return page

    async def create(self, principal: Principal, body: dict[str, Any]) -> str:
        org_id = require_org(principal)
        given = body["project_id"] if "project_id" in body else principal.project_id
        project_id = check_project(self._db, org_id, given)
        _require_admin(self._permissions.caller(principal), project_id)
        values = _values(body)
        _check_texts(values)
        now = clock.now_iso()
        row: Row = {
            "id": ids.new_id(),
            "org_id": org_id,
            "project_id": project_id,
            "description": "",
            "from_address": None,
            "locale": values.get("locale") or self._default_locale(org_id, project_id),
            "for_account_recovery": False,
            "for_new_users": False,
            "is_delete_protected": False,
            "is_active": True,
            "created_date": now,
            "created_by": principal.actor,
            "last_updated_date": now,
            "last_updated_by": principal.actor,
            **_columns(values),
        }
        await self._db.write(lambda c: store.create(c, row))
        return str(row["id"])

    async def patch(self, principal: Principal, template_id: str, body: dict[str, Any]) -> None:
        row, held = self._load(principal, template_id)
        values = _values(body)
        if "project_id" in body:
            values["project_id"] = check_project(self._db, row["org_id"], body["project_id"])
            _require_admin(held, values["project_id"])
        merged = {**_current(row), **values}
        _check_texts(merged)
        changes = _columns(values)
        changes.update(last_updated_date=clock.now_iso(), last_updated_by=principal.actor)

        def write(conn: Any) -> None:
            if not store.patch(conn, template_id, changes):
                raise NotFound("E-mail template not found")

        await self._db.write(write)

    async def delete(self, principal: Principal, template_id: str, *, force: bool) -> None:
        row, _ = self._load(principal, template_id)
        if row["is_delete_protected"] and not force:
            raise DeleteProtected("E-mail template")

        def write(conn: Any) -> None:
            if not store.delete(conn, template_id):
                raise NotFound("E-mail template not found")

        await self._db.write(write)

    def _load(self, principal: Principal, template_id: str) -> tuple[Row, Caller]:
        org_id = require_org(principal)
        row = self._db.read(lambda c: store.get(c, template_id))
        if row is None or row["org_id"] != org_id:
            raise NotFound("E-mail template not found")
        if principal.project_id and row["project_id"] != principal.project_id:
            raise NotFound("E-mail template not found")
        held = self._permissions.caller(principal)
        if not held.is_project_admin(row["project_id"]):
            if held.is_admin_anywhere():
                raise Denied("Only admins of the template's org or project may manage it")
            raise NotFound("E-mail template not found")
        return row, held

    def _default_locale(self, org_id: str, project_id: str | None) -> str:
        org, project = self._db.read(lambda c: store.context(c, org_id, project_id))
        for owner in (project, org):
            if owner:
                found = json.loads(owner.get("settings") or "{}").get("default_locale")
                if found:
                    return str(found)
        return "en-US"


def _require_admin(held: Caller, project_id: str | None) -> None:
    if project_id is None and not held.is_org_admin:
        raise Denied("Only org admins may manage org-level e-mail templates")
    if not held.is_project_admin(project_id):
        raise Denied("Only org admins and the project's admins may manage its e-mail templates")


def _values(body: dict[str, Any]) -> Row:
    out: Row = {}
    if "name" in body:
        out["name"] = fields.identifier("name", body["name"])
    if "description" in body:
        out["description"] = fields.description("description", body["description"])
    if "subject" in body:
        out["subject"] = fields.single_line("subject", body["subject"], max_length=MAX_SUBJECT)
    for name in ("body_txt", "body_html"):
        if name in body:
            out[name] = _body(name, body[name])
    if "from_address" in body:
        out["from_address"] = (
            None
            if body["from_address"] in (None, "")
            else fields.email("from_address", body["from_address"])
        )
    if "locale" in body:
        out["locale"] = fields.locale("locale", body["locale"])
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    if "custom_args" in body:
        out["custom_args"] = _custom_args(body["custom_args"])
    for name in FLAGS:
        if name in body:
            out[name] = fields.boolean(name, body[name])
    return out


def _body(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError(name, "must be a string")
    if len(value) > MAX_BODY:
        raise ValidationError(name, f"must be at most {MAX_BODY} characters")
    return value


def _custom_args(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError("custom_args", "must be a list of names")
    bad = [v for v in value if not templating.valid_custom_arg(v)]
    if bad:
        raise ValidationError(
            "custom_args",
            "not usable as variable names (letters, digits and _, not a built-in): "
            + ", ".join(bad),
        )
    return list(dict.fromkeys(value))


def _check_texts(values: Row) -> None:
    texts = [values.get(name, "") for name in TEXTS]
    unknown = templating.unknown_names(texts, values.get("custom_args", []))
    if unknown:
        raise ValidationError(None, f"Unknown template variables: {', '.join(unknown)}")


def _current(row: Row) -> Row:
    return {
        "subject": row["subject"],
        "body_txt": row["body_txt"],
        "body_html": row["body_html"],
        "custom_args": json.loads(row["custom_args"]),
    }


def _columns(values: Row) -> Row:
    out = dict(values)
    for name in ("tags", "custom_args"):
        if name in out:
            out[name] = json.dumps(out[name])
    if "name" in out:
        out["name_folded"] = out["name"].casefold()
    return out


def present(row: Row) -> Row:
    """A template as the interface's EmailTemplateSchema (optional fields omitted when unset)."""
    out: Row = {
        "id": row["id"],
        "name": row["name"],
        "subject": row["subject"],
        "body_txt": row["body_txt"],
        "body_html": row["body_html"],
        "locale": row["locale"],
        "custom_args": json.loads(row["custom_args"]),
        "tags": json.loads(row["tags"]),
        "description": row["description"],
        "created_date": row["created_date"],
        "last_updated_date": row["last_updated_date"],
        **{name: bool(row[name]) for name in FLAGS},
    }
    for name in ("created_by", "last_updated_by", "project_id", "from_address"):
        if row[name] is not None:
            out[name] = row[name]
    out.setdefault("created_by", "")
    return out
