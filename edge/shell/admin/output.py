"""What `edge admin ...` prints: a table for people, one JSON document for scripts, and a
secret (a device's API key) shown once or written to an owner-only file.

`--json` prints the body the HTTP interface answers with for the same action (a list's
body, `{"user": ...}`, `{"api_key": ...}`), so a script can share code with an HTTP
client. Errors stay one line on standard error with exit code 1, as for every command.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from edge.kernel import printable
from edge.kernel.errors import Conflict
from storage import layout

Columns = Sequence[tuple[str, str]]  # (field, heading)
CELL = 48  # a longer value is shortened in the table (never in --json)


def document(body: Mapping[str, Any]) -> None:
    print(json.dumps(body, indent=2, ensure_ascii=False))


def table(rows: Iterable[Mapping[str, Any]], columns: Columns) -> None:
    """Aligned columns; yes/no for flags, '-' for a value the row does not have."""
    lines = [[heading for _, heading in columns]]
    lines += [[cell(row.get(name)) for name, _ in columns] for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(columns))]
    for line in lines:
        print(
            "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
        )


def cell(value: Any, limit: int = CELL) -> str:
    """One value made safe for a terminal: no line breaks or escape sequences."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        value = ",".join(str(item) for item in value)
    return "-" if value is None or value == "" else printable.for_log(value, limit)


def check_secret_file(path: Path | None) -> None:
    """Before anything is made or reset: a refused file must leave the old key working."""
    if path is None:
        return
    if path.exists():
        raise Conflict(f"{path} exists: give a new file for the key (it is never overwritten)")
    if not path.parent.is_dir():
        raise Conflict(f"{path.parent} is not a folder")


def write_secret(path: Path, value: str) -> None:
    layout.write_secret(path, (value + "\n").encode())


def secret(value: str, path: Path | None, label: str) -> None:
    """The secret on standard output this once, or into `path` (0600, new) and not shown."""
    if path is None:
        print(f"  {label}: {value}")
        print("  (shown this once: the server keeps only its hash)")
        return
    write_secret(path, value)
    print(f"  {label} written to {path} (readable by you only); it is not shown")


def record(row: Mapping[str, Any]) -> None:
    """One resource, a field a line (an object as compact JSON)."""
    width = max((len(name) for name in row), default=0) + 1
    for name, value in row.items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value
        print(f"{name + ':':{width}} {cell(shown, printable.MAX_LOGGED)}")
