"""JSON Schemas of the response bodies the server sends, by the public SDK's model names.

The SDK's models (`GroupInfo`, `AdminUserSchema`, ...; api/sdk_models.py and
api/access_models.py) say which fields a response holds and which are always there; edge's
own operations (organizations, billing points, the trash) add theirs here. Routes name these
models in their `responses` (`{200: "GroupInfo"}`, or `"AdminGroupInfo | GroupInfo"` where
what a caller sees depends on who it is); the OpenAPI document publishes them under
`components/schemas`, and the test suite validates every JSON response it sees against them
(tests/documented.py). Fields a caller may not view are left out, so a model requires only
what every caller gets; models stay open to fields added later, as the SDK's are.
"""

from __future__ import annotations

from api import audit, billing, certificates, commands, entry, jobs, provisioning, pulse, summary
from api.access_models import ACCESS_MODELS
from api.model_fields import BOOL, DATETIME, INT, OBJECT, STR, Schema, model, one, page
from api.sdk_models import SDK_MODELS
from edge.devices.presence import REASONS
from edge.tenancy.trash import KINDS as TRASH_KINDS

_TRASH_ENTRY = model(
    "A deleted record, restorable until purge_after",
    "id* kind* name* project_id deleted_date* deleted_by purge_after*",
    kind={"type": "string", "enum": list(TRASH_KINDS)},
    name=STR,
    project_id=STR,
    deleted_date=DATETIME,
    deleted_by=STR,
    purge_after=DATETIME,
)
EDGE_MODELS: dict[str, Schema] = {
    "Status": model("An error, or the outcome of an operation", "message*"),
    "ServiceRefused": model(
        "The tunnel does not offer the service asked for: the Status message, and the"
        " services it does offer (for a client such as `edge tunnel connect` to read)",
        "message* services*",
        services={"type": "array", "items": STR},
    ),
    "ListCounts": model(
        "A list asked only for its counts (object_count, page_count)", "object_count page_count"
    ),
    "OrgList": page("List of organizations", "orgs", "OrgSchema"),
    "NewOrgInfo": one("The new organization", "org", "NewOrgSchema"),
    "NewOrgSchema": model("The new organization's ID", "id*"),
    "TrashEntry": _TRASH_ENTRY,
    "TrashInfo": one("One entry of the trash", "trash", "TrashEntry"),
    "TrashList": page("Entries of the trash", "trash", "TrashEntry"),
    "OpenApiDocument": {"type": "object", "description": "This OpenAPI document"},
    "DestinationToken": model(
        "A new token for the device end of a tunnel (the one before stops working)",
        "destination_token*",
        destination_token=STR,
    ),
    "Twin": model(
        "A device's twin (docs/twins.md): metadata holds, in the shape of desired and"
        " reported, when each leaf was last set",
        "device_id* desired* reported* delta* metadata* version* updated_date",
        device_id=STR,
        desired=OBJECT,
        reported=OBJECT,
        delta=OBJECT,
        metadata=OBJECT,
        version=INT,
        updated_date=DATETIME,
    ),
    "TwinInfo": one("A device's twin", "twin", "Twin"),
    **billing.MODELS,
    **audit.MODELS,
    **commands.MODELS,
    **jobs.MODELS,
    **provisioning.MODELS,
    **certificates.MODELS,
    **entry.MODELS,
    **summary.MODELS,
    **pulse.MODELS,
}


# Marks a property edge adds to a model of the SDK: declared for readers and generators,
# never required, and a client of the interface keeps it as an additional property.
EXTENSION = "x-edge-extension"
_PRESENCE: dict[str, Schema] = {
    "is_online": {**BOOL, "description": "edge's own: a session or tunnel agent is connected"},
    "connected_since": {**DATETIME, "description": "edge's own: while online, since when"},
    "last_disconnect_reason": {
        "type": "string",
        "enum": list(REASONS),
        "description": "edge's own: why its last connection ended",
    },
}
# The SDK's models that edge's own fields extend (docs/presence.md).
EXTENDED: dict[str, dict[str, Schema]] = {
    "DeviceSchema": _PRESENCE,
    "AdminDeviceSchema": _PRESENCE,
}


def _extended(models: dict[str, Schema]) -> dict[str, Schema]:
    """The SDK's models with edge's own fields added, each marked `EXTENSION`."""
    out = dict(models)
    for name, fields in EXTENDED.items():
        schema = out[name]
        added = {field: {**each, EXTENSION: True} for field, each in fields.items()}
        out[name] = {**schema, "properties": {**schema["properties"], **added}}
    return out


def _with_pages(models: dict[str, Schema]) -> dict[str, Schema]:
    """Every list may carry `last_evaluated_key` (the SDK's list models do not name it)."""
    for schema in models.values():
        properties = schema.get("properties", {})
        if "page_count" in properties:
            properties.setdefault("last_evaluated_key", OBJECT)
    return models


MODELS: dict[str, Schema] = _with_pages({**_extended(SDK_MODELS), **ACCESS_MODELS, **EDGE_MODELS})
COUNTS = ("object_count", "page_count")
__all__ = ["MODELS", "COUNTS", "INT"]
