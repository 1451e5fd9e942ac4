"""edge/ops/site_keys.py: every key a site depends on is checked before it opens: a key
missing from a site whose schema brought it, present but empty, of the wrong size, or not
the one that made what is stored, stops it with one line naming the file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
from cryptography.fernet import Fernet

from edge.certificates import ca
from edge.data.signing import DataSigner
from edge.ops import check, site_keys
from edge.ops.site_keys import KeysDamaged
from storage import layout, migrate
from tests.factory import new_site
from tests.operations.test_upgrade_and_check import schema1_site

HMAC = f"{layout.KEYS_DIR}/{layout.HMAC_KEY_FILE}"
CA_CERT = f"{layout.CA_DIR}/{layout.CA_CERT_FILE}"


def problems(data_dir: Path) -> dict[str, str]:
    return {f.name: f.problem for f in site_keys.faults(data_dir)}


def test_a_sound_site_has_no_faults(data_dir: Path) -> None:
    assert problems(data_dir) == {}
    site_keys.require(data_dir)
    assert site_keys.site_schema(data_dir) == migrate.latest_version()


def test_a_folder_without_a_site_needs_no_keys(tmp_path: Path) -> None:
    assert site_keys.site_schema(tmp_path) == 0
    assert problems(tmp_path) == {}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "is missing"),
        (b"  \n", "is empty"),
        (b"short", "holds 5 bytes, not 32"),
    ],
)
def test_a_raw_key_must_be_there_whole(data_dir: Path, content: bytes | None, problem: str) -> None:
    path = data_dir / HMAC
    if content is None:
        path.unlink()
    else:
        path.write_bytes(content)
    assert problems(data_dir) == {HMAC: problem}
    with pytest.raises(site_keys.KeysDamaged) as refused:
        site_keys.require(data_dir)
    assert str(data_dir / HMAC) in str(refused.value) and "edge backup" in str(refused.value)


def test_the_ca_certificate_must_belong_to_its_key(data_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    layout.prepare(other)
    ca.load_or_create_ca(other)
    (data_dir / CA_CERT).write_bytes((other / CA_CERT).read_bytes())
    assert problems(data_dir) == {CA_CERT: f"does not belong to {layout.CA_DIR}/ca.key"}


def test_a_signing_key_that_does_not_load_is_damaged(data_dir: Path) -> None:
    [signing] = sorted(data_dir.glob(site_keys.SIGNING_KEYS))
    signing.write_bytes(b"-----BEGIN EC PRIVATE KEY-----\nnot a key\n")
    name = str(signing.relative_to(data_dir))
    assert problems(data_dir) == {name: "does not load: it is damaged"}
    signing.unlink()
    assert problems(data_dir) == {site_keys.SIGNING_KEYS: "is missing: no token signing key"}


KEY_FILES = [
    "keys/signing-*.pem",
    "keys/hmac.key",
    "keys/mfa.fernet.key",
    "keys/files-url.key",
    "keys/data-signing.key",
    "ca/ca.key",
    "ca/ca.pem",
]


def key_path(data_dir: Path, name: str) -> Path:
    return next(data_dir.glob(name))


def findings(data_dir: Path) -> tuple[bool, list[str]]:
    lines: list[str] = []
    return check.run(data_dir, echo=lines.append), lines


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
