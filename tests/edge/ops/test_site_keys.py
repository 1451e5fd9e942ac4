"""edge/ops/site_keys.py: every key a site depends on is checked before it opens: a key
missing from a site whose schema brought it, present but empty, of the wrong size, or not
the one that made what is stored, stops it with one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.certificates import ca
from edge.ops import site_keys
from storage import layout, migrate

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
