"""Every key of a data folder, checked before a site opens and by `edge check`
(docs/operating.md, "Keys").

A site makes its keys at its first start, and what it writes from then on depends on them:
sessions on the token signing keys, continuation keys on `hmac.key`, TOTP secrets on
`mfa.fernet.key`, device certificates on the CA, signed entries on `data-signing.key`,
presigned URLs on `files-url.key`. A new key in place of a lost one opens none of that (a
TOTP sign-in would fail on a secret it cannot decrypt), so keys are made only for a site
without data: a key that is missing from a site whose schema is at least the version that
brought the key, or that is present but does not load or does not open what it protects,
stops every command that opens the site, with one line naming the files and the way back
(a backup). A site made before a key existed gets that key at its next start.

The server certificate (`ca/server.pem`, `ca/server.key`) is not among them: it is derived
from the CA and issued again when it is missing or damaged (edge/certificates/ca.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from cryptography import x509
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from edge.data.signing import DataSigner
from edge.kernel.errors import EdgeError
from storage import data, layout, mfa, migrate, snapshot

T = TypeVar("T")
RAW_KEY_BYTES = 32
RESTORE = (
    "restore it from a backup: copy the file back from a folder made by `edge backup`, or"
    ' `edge restore` the whole site (docs/operating.md, "Keys")'
)


class KeysDamaged(EdgeError):
    """A key the site depends on is missing or damaged: the site must not open."""


@dataclass(frozen=True)
class Fault:
    name: str  # the file, relative to the data folder
    problem: str

    def __str__(self) -> str:
        return f"{self.name} {self.problem}"


@dataclass
class Folder:
    """The data folder being checked, and its database read on one read-only connection,
    opened when a check first asks and shared by every check of one `faults` call (each
    check opened its own, a few milliseconds apiece at every start and every test)."""

    data_dir: Path
    _db: snapshot.Reading | None = field(default=None, init=False)

    def stored(self, read: Callable[..., str | None]) -> str | None:
        """`read` on the database; None without a database, or one it cannot read (an
        older schema without the table, or a database edge check faults)."""
        try:
            return self._read(read, None)
        except snapshot.Unreadable:
            return None

    def schema(self) -> int:
        """The schema of the site's database as it is now (0: no site yet). A database that
        cannot be read counts as the newest: its keys must not be made again over it."""
        try:
            return self._read(migrate.current_version, 0)
        except snapshot.Unreadable:
            return migrate.latest_version()

    def _read(self, read: Callable[..., T], without: T) -> T:
        path = layout.database_path(self.data_dir)
        if not path.is_file() or path.stat().st_size == 0:
            return without
        if self._db is None:
            self._db = snapshot.Reading(path)
        return self._db.read(read)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


@contextmanager
def _folder(data_dir: Path) -> Iterator[Folder]:
    folder = Folder(data_dir)
    try:
        yield folder
    finally:
        folder.close()


Verify = Callable[[Folder, bytes], None]  # (the folder, the file's bytes); ValueError if bad


@dataclass(frozen=True)
class Key:
    name: str
    since: int  # the schema version from which every site holds this key
    verify: Verify


def _ec_private(raw: bytes) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(raw, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError("is not an EC private key")
    return key


def _signing_key(folder: Folder, raw: bytes) -> None:
    _ec_private(raw)


def _raw(raw: bytes) -> None:
    if len(raw) != RAW_KEY_BYTES:
        raise ValueError(f"holds {len(raw)} bytes, not {RAW_KEY_BYTES}")


def _hmac_key(folder: Folder, raw: bytes) -> None:
    _raw(raw)


def _mfa_key(folder: Folder, raw: bytes) -> None:
    fernet = Fernet(raw)  # ValueError when it is not a Fernet key
    stored = folder.stored(mfa.any_secret)
    if stored is None:
        return
    try:
        fernet.decrypt(stored.encode())
    except InvalidToken:
        raise ValueError("does not open the stored TOTP secrets: it is another key") from None


def _data_key(folder: Folder, raw: bytes) -> None:
    _raw(raw)
    stored = folder.stored(data.any_signature)
    if stored is not None and not stored.startswith(f"{DataSigner(raw).key_id}."):
        raise ValueError("did not sign the stored data entries: it is another key")


def _files_key(folder: Folder, raw: bytes) -> None:
    _raw(raw)


def _ca_key(folder: Folder, raw: bytes) -> None:
    _ec_private(raw)


def _ca_cert(folder: Folder, raw: bytes) -> None:
    cert = x509.load_pem_x509_certificate(raw)
    key_path = folder.data_dir / layout.CA_DIR / layout.CA_KEY_FILE
    try:
        key = _ec_private(key_path.read_bytes())
    except (OSError, ValueError):
        return  # the key's own fault is reported
    if cert.public_key() != key.public_key():
        raise ValueError(f"does not belong to {layout.CA_DIR}/{layout.CA_KEY_FILE}")


KEYS = (
    Key(f"{layout.KEYS_DIR}/{layout.HMAC_KEY_FILE}", 1, _hmac_key),
    Key(f"{layout.KEYS_DIR}/{layout.MFA_KEY_FILE}", 5, _mfa_key),
    Key(f"{layout.CA_DIR}/{layout.CA_KEY_FILE}", 9, _ca_key),
    Key(f"{layout.CA_DIR}/{layout.CA_CERT_FILE}", 9, _ca_cert),
    Key(f"{layout.KEYS_DIR}/{layout.DATA_SIGNING_KEY_FILE}", 11, _data_key),
    Key(f"{layout.KEYS_DIR}/{layout.FILES_URL_KEY_FILE}", 12, _files_key),
)
SIGNING_KEYS = f"{layout.KEYS_DIR}/{layout.SIGNING_KEY_PREFIX}*.pem"


def faults(data_dir: Path) -> list[Fault]:
    """Each key the site depends on that is missing, and each key present that is damaged."""
    with _folder(data_dir) as folder:
        schema = folder.schema()
        found = _signing_faults(folder, schema)
        for key in _required_keys(data_dir, schema):
            fault = _fault(folder, key.name, key.verify)
            if fault is not None:
                found.append(fault)
        return found


def require(data_dir: Path) -> None:
    """Raise KeysDamaged, one line naming every faulty file, unless every key is sound."""
    found = faults(data_dir)
    if found:
        listed = "; ".join(f"{data_dir / f.name} {f.problem}" for f in found)
        raise KeysDamaged(f"{listed}: this site's data depends on it; {RESTORE}")


def site_schema(data_dir: Path) -> int:
    """The schema of the site's database as it is now (0: no site yet). A database that
    cannot be read counts as the newest: its keys must not be made again over it."""
    with _folder(data_dir) as folder:
        return folder.schema()


def _required_keys(data_dir: Path, schema: int) -> list[Key]:
    """Keys the site holds by its schema, and every key of a CA that is there in part (a
    CA key without its certificate is no CA: nothing may make a new one over it)."""
    ca = data_dir / layout.CA_DIR
    partial_ca = (ca / layout.CA_KEY_FILE).exists() or (ca / layout.CA_CERT_FILE).exists()
    return [
        key
        for key in KEYS
        if schema >= key.since
        or (partial_ca and key.name.startswith(f"{layout.CA_DIR}/"))
        or (data_dir / key.name).exists()
    ]


def _signing_faults(folder: Folder, schema: int) -> list[Fault]:
    paths = sorted(folder.data_dir.glob(SIGNING_KEYS))
    if not paths:
        return [Fault(SIGNING_KEYS, "is missing: no token signing key")] if schema >= 1 else []
    named = (str(p.relative_to(folder.data_dir)) for p in paths)
    return [f for f in (_fault(folder, name, _signing_key) for name in named) if f]


def _fault(folder: Folder, name: str, verify: Verify) -> Fault | None:
    path = folder.data_dir / name
    if not path.exists():
        return Fault(name, "is missing")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Fault(name, f"cannot be read ({exc.strerror})")
    if not raw.strip():
        return Fault(name, "is empty")
    try:
        verify(folder, raw)
    except (ValueError, TypeError) as exc:
        return Fault(name, _problem(exc))
    return None


def _problem(exc: Exception) -> str:
    text = str(exc)
    if text.startswith(("is ", "holds ", "does ", "did ")):
        return text
    return "does not load: it is damaged"
