"""Value rules for the fields of a device (create and patch bodies), as stored columns.

The body's shape was checked by the HTTP layer; here each value is normalized or refused
with a 400 naming the field. Rules accounts share (locale, time zone, picture URL, custom
attributes) come from `edge/tenancy/user_rules.py`, so a device and a user never disagree.
"""

from __future__ import annotations

from typing import Any

from edge import fields
from edge.devices.topics import normalize_scopes
from edge.tenancy import user_rules

DESCRIPTIVE = ("manufacturer", "product", "site", "serial_number", "mac_address")
FLAGS = ("is_active", "is_delete_protected")
ATTRIBUTES = ("custom_attributes", "restricted_custom_attributes")


def columns(body: dict[str, Any]) -> dict[str, Any]:
    """The stored columns for every device field present in the body."""
    out: dict[str, Any] = {}
    if "name" in body:
        out["name"] = fields.text("name", body["name"])
        out["name_folded"] = out["name"].casefold()
    for name in DESCRIPTIVE:
        if name in body:
            out[name] = user_rules.optional_text(name, body[name])
    if "picture" in body:
        out["picture"] = user_rules.optional_text("picture", body["picture"], user_rules.MAX_URL)
    if "locale" in body:
        out["locale"] = fields.locale("locale", body["locale"])
    if "zoneinfo" in body:
        out["zoneinfo"] = user_rules.zone("zoneinfo", body["zoneinfo"])
    if "tags" in body:
        out["tags"] = fields.tags("tags", body["tags"])
    for name in FLAGS:
        if name in body:
            out[name] = fields.boolean(name, body[name])
    for name in ATTRIBUTES:
        if name in body:
            out[name] = user_rules.attributes(name, body[name])
    if "iot_scopes" in body:
        out["iot_scopes"] = normalize_scopes("iot_scopes", body["iot_scopes"])
    return out
