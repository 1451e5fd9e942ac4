"""Keys of a site (edge/ops/site_keys.py): each one removed, emptied or cut in half on an
existing site makes `edge check` fail naming it and keeps the site from opening (the real
`edge serve` refuses with one line naming it); an empty site gets every key made; a site
from before a key existed gets that one; a valid key that is not the one the data was
written with is refused too."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
from cryptography.fernet import Fernet

from edge import cli
from edge.data.signing import DataSigner
from edge.ops import check, site_keys
from edge.ops.site_keys import KeysDamaged
from storage import layout
from tests.factory import new_site
from tests.operations.test_upgrade_and_check import schema1_site
from tests.ports import free_port

KEY_FILES = [
    "keys/signing-*.pem",
    "keys/hmac.key",
    "keys/mfa.fernet.key",
    "keys/files-url.key",
    "keys/data-signing.key",
    "ca/ca.key",
    "ca/ca.pem",
]


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


def key_path(data_dir: Path, name: str) -> Path:
    return next(data_dir.glob(name))


def findings(data_dir: Path) -> tuple[bool, list[str]]:
    lines: list[str] = []
    return check.run(data_dir, echo=lines.append), lines


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


@pytest.mark.parametrize("name", KEY_FILES)
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


def test_an_empty_site_gets_every_key_and_passes_check(tmp_path: Path) -> None:
    folder = tmp_path / "new"
    new_site(folder).services.db.close()
    for name in KEY_FILES:
        assert key_path(folder, name).stat().st_size > 0
    assert site_keys.faults(folder) == []
    assert findings(folder)[0]


def test_a_site_from_before_a_key_existed_gets_it(tmp_path: Path) -> None:
    """Schema 1 had the signing and HMAC keys only: the later ones are made at its upgrade."""
    folder = tmp_path / "old"
    schema1_site(folder)
    for name in ("keys/mfa.fernet.key", "keys/files-url.key", "keys/data-signing.key"):
        (folder / name).unlink(missing_ok=True)
    assert site_keys.faults(folder) == []
    new_site(folder).services.db.close()
    for name in KEY_FILES:
        assert key_path(folder, name).is_file()
    (folder / "keys" / "hmac.key").unlink()  # but what schema 1 had, it must keep
    assert [f.name for f in site_keys.faults(folder)] == ["keys/hmac.key"]


def _store_a_totp_secret(data_dir: Path) -> None:
    secret = Fernet((data_dir / "keys" / "mfa.fernet.key").read_bytes()).encrypt(b"JBSWY3DP")
    conn = apsw.Connection(str(layout.database_path(data_dir)))
    conn.execute(
        "INSERT INTO mfa_factors (user_id, kind, secret_enc, created_date)"
        " VALUES ('user000000000001', 'software', ?, '2026-01-01T00:00:00.000000Z')",
        (secret.decode(),),
    )
    conn.close()


def _store_a_signed_entry(data_dir: Path) -> None:
    signer = DataSigner((data_dir / "keys" / "data-signing.key").read_bytes())
    conn = apsw.Connection(str(layout.database_path(data_dir)))
    when = "2026-01-01T00:00:00.000000Z"
    conn.execute(
        "INSERT INTO data (group_id, path, created_by, created_date, last_updated_by,"
        " last_updated_date, updated_by_list, updated_date_list, revision, signature, value)"
        " VALUES ('g', '/a', 'u', ?, 'u', ?, '[]', '[]', 1, ?, '1')",
        (when, when, f"{signer.key_id}.digest"),
    )
    conn.close()


@pytest.mark.parametrize(
    ("name", "store", "new_key"),
    [
        ("keys/mfa.fernet.key", _store_a_totp_secret, Fernet.generate_key),
        ("keys/data-signing.key", _store_a_signed_entry, lambda: os.urandom(32)),
    ],
)
def test_another_valid_key_does_not_open_the_stored_data(
    name: str, store: Callable[[Path], None], new_key: Callable[[], bytes], data_dir: Path
) -> None:
    """The MFA case of the issue: a new key made over a lost one made every TOTP sign-in
    a 500. Now the site does not open, and check says why."""
    store(data_dir)
    assert site_keys.faults(data_dir) == []  # the right key opens it
    (data_dir / name).write_bytes(new_key())
    ok, lines = findings(data_dir)
    assert not ok and any(name in line and "another key" in line for line in lines)
    with pytest.raises(KeysDamaged, match="another key"):
        new_site(data_dir)


def test_a_damaged_server_certificate_is_issued_again(data_dir: Path) -> None:
    """It is derived from the CA: check warns, and the next start makes a new one."""
    from edge.certificates import ca

    issued = ca.server_certificate(data_dir, ["localhost"])
    issued.key.write_bytes(b"")
    ok, lines = findings(data_dir)
    assert ok and any(line.startswith("warn  keys") and "server" in line for line in lines)
    again = ca.server_certificate(data_dir, ["localhost"])
    assert again.key.stat().st_size > 0 and ca.server_certificate_problem(data_dir) is None


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
