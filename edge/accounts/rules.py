"""Value rules for the fields every account has (create and patch bodies), as stored
columns.

The body's shape was checked by the HTTP layer; here each value is normalized or refused
with a 400 naming the field. A kind checks its own fields around these (`columns` in
edge/accounts/users.py and devices.py), so a user and a device never disagree on a field
they share.
"""

from __future__ import annotations

from typing import Any

from edge.kernel import fields

FLAGS = ("is_active", "is_delete_protected")
ATTRIBUTES = ("custom_attributes", "restricted_custom_attributes")


def columns(body: dict[str, Any]) -> dict[str, Any]:
    """The stored columns for every shared field present in the body."""
    out: dict[str, Any] = {}
    if "picture" in body:
        out["picture"] = fields.optional_text("picture", body["picture"], fields.MAX_URL)
    if "locale" in body:
        out["locale"] = fields.locale("locale", body["locale"])
    if "zoneinfo" in body:
        out["zoneinfo"] = fields.zone("zoneinfo", body["zoneinfo"])
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    for name in FLAGS:
        if name in body:
            out[name] = fields.boolean(name, body[name])
    for name in ATTRIBUTES:
        if name in body:
            out[name] = fields.attributes(name, body[name])
    return out
