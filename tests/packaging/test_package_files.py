"""What the Debian package installs, checked without building it: the generated edge.toml
names every setting and parses with edge's own loader, and no unit sets anything that
edge.toml could set (an Environment= line or a setting's flag would silently win over it)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from edge import cli
from edge.kernel.config import SETTINGS, load
from edge.kernel.config_template import PACKAGED, packaged, render

REPO = Path(__file__).resolve().parents[2]
UNITS = ("edge.service", "edge-backup.service", "edge-backup.timer")
SETTING_LINE = re.compile(r"^#?([a-z_]+) = ", re.MULTILINE)


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "edge.toml"
    path.write_text(text)
    return path


def unit_lines(name: str, key: str) -> list[str]:
    text = (REPO / "packaging" / name).read_text()
    return [line.split("=", 1)[1] for line in text.splitlines() if line.startswith(f"{key}=")]


def test_the_packaged_config_names_every_setting_once() -> None:
    named = SETTING_LINE.findall(packaged())
    assert named == [s.name for s in SETTINGS]


def test_the_packaged_config_sets_the_data_folder_and_log_format(tmp_path: Path) -> None:
    config = load(config_file=written(tmp_path, packaged()))
    assert config.data_dir == Path("/var/lib/edge") and config.log_format == "json"
    defaults = load()
    for setting in SETTINGS:
        if setting.name not in PACKAGED:
            assert getattr(config, setting.name) == getattr(defaults, setting.name), setting


def test_every_commented_default_is_a_valid_line_that_keeps_the_default(tmp_path: Path) -> None:
    """Removing every `#` before a setting changes nothing: each shown default is right."""
    uncommented = re.sub(r"^#([a-z_]+ = )", r"\1", packaged(), flags=re.MULTILINE)
    assert not re.search(r"^#[a-z_]+ = ", uncommented, re.MULTILINE)
    assert load(config_file=written(tmp_path, uncommented)) == load(
        config_file=written(tmp_path, packaged())
    )


def test_a_chosen_value_is_written_as_toml_the_loader_reads_back(tmp_path: Path) -> None:
    chosen = {
        "tls_hostnames": ("edge.lan", "192.0.2.1"),
        "trusted_proxies": ("10.0.0.0/8",),
        "sms_gateway_body": 'to={to}&text="{text}" \\ é',
        "header_timeout": 2.5,
        "access_log": False,
    }
    config = load(config_file=written(tmp_path, render(chosen)))
    assert {name: getattr(config, name) for name in chosen} == chosen


@pytest.mark.parametrize("unit", UNITS)
def test_no_unit_sets_what_edge_toml_can(unit: str) -> None:
    assert unit_lines(unit, "Environment") == [] and unit_lines(unit, "EnvironmentFile") == []
    flags = {s.flag for s in SETTINGS}
    for command in unit_lines(unit, "ExecStart"):
        argv = shlex.split(command)
        assert argv[0] == "/usr/bin/edge"
        assert not flags & {a.split("=")[0] for a in argv}, command
        assert argv[argv.index("--config") + 1] == "/etc/edge/edge.toml"


def test_the_units_point_at_the_installed_operating_guide() -> None:
    for unit in UNITS:
        (link,) = unit_lines(unit, "Documentation")
        assert link == "file:///usr/share/doc/edge/docs/operating.md"
    build = (REPO / "packaging" / "deb" / "build.sh").read_text()
    assert (
        'install -m 0644 docs/*.md "$DOC/docs/"' in build
        and 'DOC="$STAGE/usr/share/doc/edge"' in build
    )


def test_the_manual_page_names_every_command() -> None:
    page = (REPO / "packaging" / "deb" / "edge.1").read_text()
    (commands,) = [a for a in cli._parser()._actions if a.dest == "command"]
    for name in commands.choices:  # type: ignore[union-attr]
        assert re.search(rf"^\.B[I]? \"?{name}\b", page, re.MULTILINE), name
