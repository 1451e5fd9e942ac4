"""Keys of a site through the commands: each one removed, emptied or cut in half on an
existing site makes `edge check` fail naming it and keeps the site from opening (`edge init`
and the real `edge serve` refuse with one line naming it); `edge check` verifies the
operator's certificate and key. The rules of edge/ops/site_keys.py (new keys for a new or
older site, another valid key refused): tests/edge/ops/test_site_keys.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from edge import cli
from edge.ops.site_keys import KeysDamaged
from tests.edge.ops.test_site_keys import KEY_FILES, findings, key_path
from tests.factory import new_site
from tests.ports import free_port


def _remove(path: Path) -> None:
    path.unlink()


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _halve(path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


DAMAGE: dict[str, Callable[[Path], None]] = {
    "missing": _remove,
    "empty": _empty,
    "cut in half": _halve,
}
EXPECTED = {"missing": "is missing", "empty": "is empty", "cut in half": ""}


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("name", KEY_FILES)
def test_a_damaged_key_fails_check_and_the_site_does_not_open(
    name: str, damage: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = key_path(data_dir, name)
    DAMAGE[damage](path)
    before = sorted(p.name for p in path.parent.iterdir())
    ok, lines = findings(data_dir)
    assert not ok
    failed = [line for line in lines if line.startswith("FAIL")]
    assert len(failed) == 1 and failed[0].startswith("FAIL  keys"), lines
    shown = str(data_dir / name) if damage == "missing" and "*" in name else str(path)
    assert shown in failed[0] and EXPECTED[damage] in failed[0] and "edge backup" in failed[0]
    with pytest.raises(KeysDamaged, match="edge restore") as raised:
        new_site(data_dir)
    assert shown in raised.value.message and "\n" not in raised.value.message
    code = cli.main(["init", "--data-dir", str(data_dir)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and shown in err and "Traceback" not in err
    assert sorted(p.name for p in path.parent.iterdir()) == before  # nothing made over it


# `edge serve` as a process, once for each kind of damage in `make test` (a second each);
# every other key in `make test-long`: what each key's damage says is checked for every key
# and every damage above, through the same refusal `edge init` gives.
SERVED = [
    pytest.param(name, marks=[pytest.mark.long] if i >= len(DAMAGE) else [])
    for i, name in enumerate(KEY_FILES)
]


@pytest.mark.parametrize("name", SERVED)
def test_serve_refuses_with_one_line_naming_the_key(name: str, data_dir: Path) -> None:
    path = key_path(data_dir, name)
    damage = list(DAMAGE)[KEY_FILES.index(name) % len(DAMAGE)]
    DAMAGE[damage](path)
    command = [sys.executable, "-m", "edge", "serve", "--data-dir", str(data_dir)]
    command += ["--port", str(free_port()), "--mqtt-ws-port", "0", "--mqtt-wss-port", "0"]
    command += ["--mqtt-port", "0", "--mqtt-tls-port", "0"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("edge: "), done.stderr
    shown = str(data_dir / name) if damage == "missing" and "*" in name else str(path)
    assert shown in lines[0] and "edge restore" in lines[0]
    assert "/v2" not in done.stdout


def test_check_verifies_the_operators_certificate_and_key(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tls_cert and tls_key live outside the data folder: check loads them from the
    configuration and says when the key is not the certificate's."""
    from edge.certificates import ca

    one = ca.server_certificate(tmp_path / "one", ["localhost"])
    other = ca.server_certificate(tmp_path / "other", ["localhost"])
    where = ["check", "--data-dir", str(data_dir), "--tls-cert", str(one.cert)]
    assert cli.main([*where, "--tls-key", str(one.key)]) == 0
    assert "ok    tls" in capsys.readouterr().out
    assert cli.main([*where, "--tls-key", str(other.key)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  tls" in out and f"{other.key} does not belong" in out
