"""The commented edge.toml the Debian package installs, rendered from edge/kernel/config.py's
declarations so that it names every setting and never drifts from them.

Each setting is a comment block (its meaning, variable, flag and default) over a line
`#name = <default>`: removing the `#` gives a valid line whose value is the default. The
package's own choices (`PACKAGED`) are written uncommented, so that the file, not the
service unit, says where the data lives and how the log is written.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from edge.kernel.config import SETTINGS, Setting

# What the package sets: the unit passes only --config, so these live in the file, where an
# operator sees them and may change them (an Environment= line or a flag in the unit would
# silently win over the file).
PACKAGED: Mapping[str, Any] = {"data_dir": Path("/var/lib/edge"), "log_format": "json"}
WIDTH = 92
HEADER = """\
edge.toml: the settings of the edge server (/etc/edge/edge.toml, installed by the package).

Every setting is listed below with its meaning and default. A line that starts with "#"
leaves the default in force: remove the "#" and change the value to set it. Values are
TOML: strings in double quotes, numbers and true/false bare.
Precedence: defaults < this file < environment (EDGE_*) < flags. The service units pass
only --config /etc/edge/edge.toml, so what is set here is what the server uses.
After a change: systemctl restart edge. The file is readable by root and the edge group
only, as it may hold secrets (admin_password, smtp_password, metrics_token).
"""


def packaged() -> str:
    """The file the Debian package installs as /etc/edge/edge.toml."""
    return render(PACKAGED)


def render(chosen: Mapping[str, Any]) -> str:
    """Every setting, commented out at its default, except `chosen` ones, set as given."""
    blocks = [_comment(HEADER)]
    blocks += [_block(s, chosen) for s in SETTINGS]
    return "\n\n".join(blocks) + "\n"


def _block(setting: Setting, chosen: Mapping[str, Any]) -> str:
    names = f"{setting.env}, {setting.flag}"
    if setting.name not in chosen:
        about = f"{setting.help}\n({names})"
        return f"{_comment(about)}\n#{setting.name} = {toml_value(setting.default)}"
    about = f"{setting.help}\n({names}; set by the package, the default is {_shown(setting)})"
    return f"{_comment(about)}\n{setting.name} = {toml_value(chosen[setting.name])}"


def _shown(setting: Setting) -> str:
    return "none" if setting.default in (None, ()) else toml_value(setting.default)


def _comment(text: str) -> str:
    lines = []
    for paragraph in text.rstrip("\n").split("\n"):
        lines += textwrap.wrap(paragraph, WIDTH - 2, break_on_hyphens=False) or [""]
    return "\n".join(f"# {line}".rstrip() for line in lines)


def toml_value(value: Any) -> str:
    """A default as TOML that the setting's parser reads back to the same default (none is
    the empty string, which optional settings read as unset)."""
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string: a TOML basic string
