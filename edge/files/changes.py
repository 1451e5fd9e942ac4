"""What a file write tells after its commit: the group, the path and how it changed (an
upload completed is "put", index fields changed "patch", a delete "delete", a cascade
"delete_below" naming the top of the subtree). `Files.changes` is the hook; uploads tell
on the same one. The live change feed (edge/live/) listens; docs/events.md."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileChanged:
    org_id: str
    group_id: str
    path: str
    operation: str
