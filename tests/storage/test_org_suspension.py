"""Migration 0032's trigger: suspending an organization revokes the sessions of its users
(and devices) in the writing transaction, whoever writes it, which moves the auth epoch;
staff sessions scoped to it and other orgs' sessions stay; reactivating revives none."""

from __future__ import annotations

from edge.app import Site
from storage import credentials, orgs, sessions
from storage.rows import Tx
from tests.rows import Rows

KINDS = ("user", "device", "staff")


def _session(conn: Tx, session_id: str, kind: str, org_id: str) -> None:
    sessions.create(
        conn,
        {
            "id": session_id,
            "account_id": f"{kind}-account",
            "account_kind": kind,
            "org_id": org_id,
            "project_id": None,
            "refresh_hash": session_id,
            "created_date": "2026-01-01T00:00:00Z",
            "refresh_expires_at": "2099-01-01T00:00:00Z",
        },
    )


def _revoked(site: Site) -> dict[str, bool]:
    rows = site.services.db.read(lambda c: c.execute("SELECT id, revoked FROM sessions"))
    return {session_id: bool(revoked) for session_id, revoked in rows}


def test_suspending_an_org_revokes_its_sessions_but_staffs(site: Site) -> None:
    suspended, bystander = Rows(site).org(), Rows(site).org()

    def arrange(conn: Tx) -> None:
        for kind in KINDS:
            _session(conn, kind, kind, suspended)
        _session(conn, "elsewhere", "user", bystander)

    db = site.services.db
    db.write_sync(arrange)
    before = db.read(credentials.auth_epoch)
    db.write_sync(lambda c: orgs.patch(c, suspended, {"name": "Renamed"}))
    assert not any(_revoked(site).values())  # not a suspension
    db.write_sync(lambda c: orgs.patch(c, suspended, {"is_active": False}))
    expected = {"user": True, "device": True, "staff": False, "elsewhere": False}
    assert _revoked(site) == expected
    assert db.read(credentials.auth_epoch) > before
    db.write_sync(lambda c: orgs.patch(c, suspended, {"is_active": True}))
    assert _revoked(site) == expected  # reactivating revives nothing
