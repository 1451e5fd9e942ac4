"""The first staff account, made on the first start of an empty data folder."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from pathlib import Path

from edge.auth import hashing
from edge.kernel import clock, fields, ids
from edge.kernel.config import Config
from storage import layout, staff
from storage.database import Database

STAFF_USERNAME = "admin"
IGNORED = (
    "EDGE_ADMIN_PASSWORD (admin_password) is ignored: this data folder already has its"
    " staff account; to set a new password run `edge admin reset-password admin`"
)
log = logging.getLogger("edge")


@dataclass(frozen=True)
class FirstStaff:
    username: str
    email: str
    password: str | None  # set only when generated here; shown once
    credentials_file: Path | None


def ensure_first(db: Database, config: Config) -> FirstStaff | None:
    """Create the first staff account unless one exists; None when nothing was created.

    `admin_password` only seeds the first start: on a site that has its staff account it
    is ignored, and the log says so (the way to a new one is `edge admin reset-password`).
    """
    if db.read(staff.count) > 0:
        if config.admin_password is not None:
            log.warning(IGNORED)
        return None
    email = fields.email("admin_email", config.admin_email)
    given = config.admin_password.reveal() if config.admin_password else None
    password = given or secrets.token_urlsafe(18)
    hashing.check_policy(password, username=STAFF_USERNAME, field="admin_password")
    now = clock.now_iso()
    row = {
        "id": ids.new_id(),
        "username": STAFF_USERNAME,
        "username_folded": STAFF_USERNAME,
        "email": email,
        "email_folded": email.casefold(),
        "password_hash": hashing.hash_sync(password),
        "password_last_changed": now,
        "created_date": now,
        "last_updated_date": now,
    }
    db.write_sync(lambda c: staff.create(c, row))
    if given:
        return FirstStaff(STAFF_USERNAME, email, None, None)
    path = config.data_dir / layout.INITIAL_ADMIN_FILE
    text = f"username: {STAFF_USERNAME}\nemail: {email}\npassword: {password}\n"
    layout.write_secret(path, text.encode())
    return FirstStaff(STAFF_USERNAME, email, password, path)
