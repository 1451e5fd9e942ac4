"""`edge check`: is this data folder sound? Database integrity, migration state, keys, and
the permissions of secret files. Prints one line per check and exits non-zero on a fault.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from edge.auth.keys import HMAC_FILE, SIGNING_PREFIX, load_or_create
from storage import layout, migrate, snapshot

Echo = Callable[[str], None]


@dataclass(frozen=True)
class Finding:
    level: str  # "ok", "warn" or "FAIL"
    check: str
    detail: str


def run(data_dir: Path, echo: Echo = print) -> bool:
    """Run every check, print the findings and a summary; True when nothing failed."""
    findings = [f for check in CHECKS for f in check(data_dir)]
    for finding in findings:
        echo(f"{finding.level:5} {finding.check:12} {finding.detail}")
    failed = sum(f.level == "FAIL" for f in findings)
    warned = sum(f.level == "warn" for f in findings)
    echo(f"{len(findings) - failed - warned} ok, {warned} warnings, {failed} failed")
    return failed == 0


def _database(data_dir: Path) -> list[Finding]:
    path = layout.database_path(data_dir)
    if not path.is_file():
        return [Finding("FAIL", "database", f"{path} is missing: not an edge data folder")]
    problems = snapshot.integrity_problems(path)
    if problems:
        return [Finding("FAIL", "database", p) for p in problems[:20]]
    return [
        Finding("ok", "database", f"integrity and foreign keys sound ({path.stat().st_size} bytes)")
    ]


def _migrations(data_dir: Path) -> list[Finding]:
    path = layout.database_path(data_dir)
    if not path.is_file():
        return []
    try:
        current, latest = snapshot.schema_version(path), migrate.latest_version()
    except snapshot.Unreadable as exc:
        return [Finding("FAIL", "migrations", f"the schema version cannot be read: {exc}")]
    if current > latest:
        return [
            Finding(
                "FAIL",
                "migrations",
                f"schema {current} was made by a newer edge (this one knows up to {latest})",
            )
        ]
    if current < latest:
        return [
            Finding(
                "warn",
                "migrations",
                f"schema {current}; the next start migrates it to {latest} after a backup",
            )
        ]
    return [Finding("ok", "migrations", f"schema {current} is current")]


def _keys(data_dir: Path) -> list[Finding]:
    folder = layout.keys_dir(data_dir)
    if not list(folder.glob(f"{SIGNING_PREFIX}*.pem")) or not (folder / HMAC_FILE).is_file():
        return [Finding("FAIL", "keys", f"signing or HMAC key missing in {folder}")]
    try:
        ring = load_or_create(data_dir)
    except (ValueError, TypeError, AssertionError) as exc:
        return [Finding("FAIL", "keys", f"a key in {folder} does not load: {exc}")]
    if len(ring.hmac_secret) < 32:
        return [Finding("FAIL", "keys", "the HMAC key is shorter than 256 bits")]
    return [Finding("ok", "keys", f"{len(ring.signing)} signing key(s) and the HMAC key load")]


def _permissions(data_dir: Path) -> list[Finding]:
    findings = []
    secrets = [
        layout.database_path(data_dir),
        *_files(layout.keys_dir(data_dir)),
        # In ca/ only the private keys are secret: the certificates are public (the CA
        # certificate is served at /v2/devices/root-ca.pem).
        *(p for p in _files(data_dir / layout.CA_DIR) if p.suffix == ".key"),
    ]
    for path in secrets:
        if path.exists() and stat.S_IMODE(path.stat().st_mode) & 0o077:
            findings.append(
                Finding(
                    "FAIL", "permissions", f"{path} is readable by others; run: chmod 600 {path}"
                )
            )
    for folder in (layout.keys_dir(data_dir), data_dir / layout.CA_DIR):
        if folder.exists() and stat.S_IMODE(folder.stat().st_mode) & 0o077:
            findings.append(
                Finding(
                    "FAIL", "permissions", f"{folder} is open to others; run: chmod 700 {folder}"
                )
            )
    initial = data_dir / layout.INITIAL_ADMIN_FILE
    if initial.exists():
        findings.append(
            Finding(
                "warn",
                "permissions",
                f"{initial} still holds the first staff password; delete it once it is changed",
            )
        )
    return findings or [Finding("ok", "permissions", "secret files are owner-only")]


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def _server(data_dir: Path) -> list[Finding]:
    running = layout.is_locked(data_dir) if data_dir.exists() else False
    return [
        Finding(
            "ok",
            "server",
            "a server is running on this folder"
            if running
            else "no server is running on this folder",
        )
    ]


CHECKS = [_database, _migrations, _keys, _permissions, _server]
