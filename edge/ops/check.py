"""`edge check`: is this data folder sound? Database integrity, migration state, keys, the
permissions of secret files, and certificates near their end (devices' and the site
CA's). Prints one line per check and exits non-zero on a fault.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from edge.certificates import ca, expiry
from edge.kernel import clock, fields
from edge.kernel.printable import for_log
from edge.ops import site_keys
from storage import device_certificates, layout, migrate, snapshot, throttle, users

Echo = Callable[[str], None]
LOCKOUT_DAYS = timedelta(days=7)


@dataclass(frozen=True)
class Finding:
    level: str  # "ok", "warn" or "FAIL"
    check: str
    detail: str


def run(data_dir: Path, echo: Echo = print, tls: tuple[Path, Path] | None = None) -> bool:
    """Run every check, print the findings and a summary; True when nothing failed.
    `tls`: the operator's certificate and key (tls_cert, tls_key), when configured."""
    findings = [f for check in CHECKS for f in check(data_dir)] + _operator_tls(tls)
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
    """Every key the site depends on loads and opens what it protects (edge/ops/site_keys.py);
    a damaged server certificate is issued again at the next start."""
    if not layout.database_path(data_dir).is_file():
        return []
    found = [
        Finding("FAIL", "keys", f"{data_dir / f.name} {f.problem}: {site_keys.RESTORE}")
        for f in site_keys.faults(data_dir)
    ]
    renewed = ca.server_certificate_problem(data_dir)
    if renewed:
        found.append(Finding("warn", "keys", f"{renewed}; the next start issues a new one"))
    return found or [Finding("ok", "keys", "every key loads and opens what it protects")]


def _operator_tls(tls: tuple[Path, Path] | None) -> list[Finding]:
    """tls_cert and tls_key, outside the data folder: they load and belong together."""
    if tls is None:
        return []
    problem = ca.pair_problem(*tls)
    if problem:
        return [Finding("FAIL", "tls", f"{problem} (tls_cert, tls_key)")]
    return [Finding("ok", "tls", f"{tls[0]} and its key load and belong together")]


def _permissions(data_dir: Path) -> list[Finding]:
    """Every file that may hold a secret is owner-only: the database, the keys, the CA,
    the outbox (reset tokens, temporary passwords and codes in file mode) and the copies
    made before upgrades; and so are their folders and the data folder itself."""
    if not data_dir.is_dir():
        return []
    files, folders = layout.secret_files(data_dir), layout.private_folders(data_dir)
    findings = [_open_to_others(p, 0o600) for p in files if _mode(p) & 0o077]
    findings += [_open_to_others(p, 0o700) for p in folders if _mode(p) & 0o077]
    initial = data_dir / layout.INITIAL_ADMIN_FILE
    if initial.exists():
        findings.append(
            Finding(
                "warn",
                "permissions",
                f"{initial} still holds the first staff password; delete it once it is changed",
            )
        )
    return findings or [Finding("ok", "permissions", "secret files and folders are owner-only")]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode) if path.exists() else 0


def _open_to_others(path: Path, mode: int) -> Finding:
    what = "folder" if path.is_dir() else "file"
    return Finding(
        "FAIL",
        "permissions",
        f"the {what} {path} is open to others; run: chmod {mode:o} {path}",
    )


def _lockouts(data_dir: Path) -> list[Finding]:
    """Accounts locked account-wide (a guess from many addresses) in the last week."""
    path = layout.database_path(data_dir)
    if not path.is_file():
        return []
    since = clock.iso(clock.now() - LOCKOUT_DAYS)
    try:
        rows = snapshot.read(path, lambda c: throttle.lockouts_since(c, since))
    except snapshot.Unreadable:
        return []  # an older schema: the next start migrates it
    return [
        Finding(
            "warn",
            "sign-in",
            f"{for_log(r['account'])} was locked account-wide at {r['created_date']} after"
            f" {r['failures']} failures from {r['addresses']} addresses",
        )
        for r in rows
    ] or [Finding("ok", "sign-in", "no account-wide sign-in lockouts in the last 7 days")]


def _logins(data_dir: Path) -> list[Finding]:
    """Login values that name two accounts, or usernames shaped like phone numbers: rows
    written before the uniqueness rule. They keep working; new writes obey the rule."""
    path = layout.database_path(data_dir)
    if not path.is_file():
        return []
    try:
        rows = snapshot.read(path, users.login_clashes)
    except snapshot.Unreadable:
        return []
    found = [
        Finding(
            "warn",
            "logins",
            f"user {r['first']} of org {r['org_id']}: its login {for_log(str(r['value']))!r}"
            + (
                f" is the e-mail of user {r['second']}"
                if r["second"]
                else " is shaped like a phone number"
            ),
        )
        for r in rows
        if r["second"] or fields.looks_like_phone(str(r["value"]))
    ]
    return found or [Finding("ok", "logins", "every login value names one account")]


def _certificates(data_dir: Path) -> list[Finding]:
    """Device certificates in force that end within 30 days: renew them (a device renews
    its own, docs/provisioning.md)."""
    path = layout.database_path(data_dir)
    if not path.is_file():
        return []
    now, until = expiry.window()
    try:
        rows = snapshot.read(path, lambda c: device_certificates.expiring(c, now, until))
    except snapshot.Unreadable:
        return []
    if not rows:
        return [Finding("ok", "certificates", "no device certificate ends within 30 days")]
    first = ", ".join(f"{r.device_id} on {r.not_after[:10]}" for r in rows[:5])
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    return [
        Finding(
            "warn",
            "certificates",
            f"{len(rows)} device certificates end within 30 days ({first}{more}): the devices"
            " renew them (POST /v2/provisioning/renew, EST simplereenroll) or an admin resets them",
        )
    ]


def _site_ca(data_dir: Path) -> list[Finding]:
    """The CA itself: a warning a year before it ends, so there is time to roll it."""
    ends = expiry.ca_not_after(data_dir)
    if ends is None:
        return []
    left = ends - clock.now()
    how = 'roll it as docs/provisioning.md says ("Rolling the site CA"): every device gets new'
    if left.total_seconds() <= 0:
        return [Finding("FAIL", "site-ca", f"ended on {ends:%Y-%m-%d}; {how} credentials")]
    if left <= expiry.CA_WARNING:
        return [
            Finding(
                "warn",
                "site-ca",
                f"ends on {ends:%Y-%m-%d} ({left.days} days); {how} credentials",
            )
        ]
    return [Finding("ok", "site-ca", f"valid until {ends:%Y-%m-%d}")]


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


CHECKS = [
    _database,
    _migrations,
    _keys,
    _permissions,
    _lockouts,
    _logins,
    _certificates,
    _site_ca,
    _server,
]
