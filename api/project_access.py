"""Project access: a user's or role's access to a project, keyed by the grantee's ID.

Every route needs a token. Only admins of the project create, change or delete access;
readers of the project (and the grantee) may read it; `is_active` is shown to admins only
and cannot be set on create.
"""

from __future__ import annotations

from api import access
from api.schemas import BOOL, TAGS, Schema, obj

CRUD = obj({f"can_{a}": BOOL for a in ("create", "read", "update", "delete")})
_FIELDS: dict[str, Schema] = {
    "is_admin": BOOL,
    "can_read": BOOL,
    "can_update": BOOL,
    "is_delete_protected": BOOL,
    "tags": TAGS,
    **{f"{r}_permissions": CRUD for r in ("user", "device", "group", "role")},
}
CREATE_ACCESS = obj(_FIELDS, title="CreateProjectAccessBody")
PATCH_ACCESS = obj({**_FIELDS, "is_active": BOOL}, title="PatchProjectAccessBody")
PATH = "/v2/projects/{project_id}/access/{grantee_id}"


ACCESS = access.AccessSpec(
    "project", PATH, "grantee_id", "projects", CREATE_ACCESS, PATCH_ACCESS, "a user or role"
)
ROUTES = access.routes(ACCESS)
