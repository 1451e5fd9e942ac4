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

from api import audit, billing, commands, entry
from api.access_models import ACCESS_MODELS
from api.model_fields import DATETIME, INT, OBJECT, STR, Schema, model, one, page
from api.sdk_models import SDK_MODELS
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
    **entry.MODELS,
}


def _with_pages(models: dict[str, Schema]) -> dict[str, Schema]:
    """Every list may carry `last_evaluated_key` (the SDK's list models do not name it)."""
    for schema in models.values():
        properties = schema.get("properties", {})
        if "page_count" in properties:
            properties.setdefault("last_evaluated_key", OBJECT)
    return models


MODELS: dict[str, Schema] = _with_pages({**SDK_MODELS, **ACCESS_MODELS, **EDGE_MODELS})
COUNTS = ("object_count", "page_count")
__all__ = ["MODELS", "COUNTS", "INT"]
