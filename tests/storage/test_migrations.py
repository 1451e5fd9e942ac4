"""Migrations: from empty and from every earlier version to the newest, schema and data."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from storage import migrate, mqtt_retained
from storage.migrate import Migration, MigrationFailed

LATEST = migrate.latest_version()


def schema(path: Path) -> list[tuple[str, str, str]]:
    conn = apsw.Connection(str(path))
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            " ORDER BY type, name"
        ).fetchall()
        return [(t, n, " ".join((s or "").split())) for t, n, s in rows]
    finally:
        conn.close()


def version(path: Path) -> int:
    conn = apsw.Connection(str(path))
    try:
        return migrate.current_version(conn)
    finally:
        conn.close()


def seed(path: Path, at_version: int) -> None:
    """Rows an installation at `at_version` would hold, written with that version's columns."""
    if at_version < 1:
        return
    conn = apsw.Connection(str(path))
    conn.execute(
        "INSERT INTO orgs (id, name, name_folded, created_date, last_updated_date)"
        " VALUES ('org0000000000001', 'Kept Org', 'kept org', '2026-01-01T00:00:00.000000Z',"
        " '2026-01-01T00:00:00.000000Z')"
    )
    if at_version < 3:  # before 0003, org admin status was a column of users
        conn.execute(
            "INSERT INTO users (id, org_id, username, username_folded, email, email_folded,"
            " is_org_admin, created_date, last_updated_date) VALUES ('user000000000001',"
            " 'org0000000000001', 'Boss', 'boss', 'b@x.test', 'b@x.test', 1,"
            " '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')"
        )
    conn.close()


def test_migrates_from_empty(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    applied = migrate.apply_pending(db)
    assert applied == [m.name for m in migrate.available()]
    assert version(db) == LATEST
    assert migrate.apply_pending(db) == []  # idempotent


@pytest.mark.parametrize("start", range(0, LATEST))
def test_migrates_from_every_earlier_version(tmp_path: Path, start: int) -> None:
    fresh, old = tmp_path / "fresh.db", tmp_path / "old.db"
    migrate.apply_pending(fresh)
    migrate.apply_pending(old, upto=start)
    assert version(old) == start
    seed(old, start)
    migrate.apply_pending(old)
    assert version(old) == LATEST
    assert schema(old) == schema(fresh)
    if start >= 1:
        conn = apsw.Connection(str(old))
        assert conn.execute("SELECT name FROM orgs").fetchall() == [("Kept Org",)]
        if start < 3:
            admin = conn.execute(
                "SELECT id, kind, target_id, is_admin FROM access"
                " WHERE grantee_id = 'user000000000001'"
            ).fetchall()
            assert admin == [("org0000000000001user000000000", "org", "org0000000000001", 1)]
            found = conn.execute("SELECT id FROM users_fts WHERE users_fts MATCH 'boss'").fetchall()
            assert found == [("user000000000001",)]
        conn.close()


def test_names_are_numbered_and_unique() -> None:
    """Numbered 1, 2, 3, ... with no gap and no number twice, whatever the last one is: a
    database is at every number on its way, so a skipped one would be a version no
    installation can be at."""
    versions = [m.version for m in migrate.available()]
    assert versions == list(range(1, len(versions) + 1))


def test_failed_migration_names_its_file_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "edge.db"
    migrate.apply_pending(db)
    before = schema(db)
    broken = [
        *migrate.available(),
        Migration(LATEST + 1, f"{LATEST + 1:04d}_good.sql", "CREATE TABLE added (x INTEGER);"),
        Migration(LATEST + 2, f"{LATEST + 2:04d}_broken.sql", "CREATE TABLE oops (;"),
    ]
    monkeypatch.setattr(migrate, "available", lambda: broken)
    with pytest.raises(MigrationFailed) as failure:
        migrate.apply_pending(db)
    assert failure.value.name == f"{LATEST + 2:04d}_broken.sql"
    assert schema(db) == before  # the good one before it was rolled back too
    assert version(db) == LATEST


def test_before_is_told_only_of_an_upgrade_with_something_to_apply(tmp_path: Path) -> None:
    """Database.open copies the database there: an up-to-date one is opened once, and
    not probed again."""
    db, told = tmp_path / "edge.db", []

    def before(current: int, target: int) -> None:
        told.append((current, target, version(db)))  # the database as it was

    migrate.apply_pending(db, upto=18, before=before)
    migrate.apply_pending(db, upto=18, before=before)
    migrate.apply_pending(db, before=before)
    migrate.apply_pending(db, before=before)
    assert told == [(0, 18, 0), (18, LATEST, 18)]


def test_the_migrations_are_read_once_and_handed_out_as_copies() -> None:
    first = migrate.available()
    first.clear()
    assert [m.version for m in migrate.available()][-1] == LATEST


def test_database_is_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    from storage.database import Database

    db = Database.open(tmp_path / "edge.db")
    try:
        assert db.read(lambda c: c.execute("PRAGMA journal_mode").fetchone()) == ("wal",)
        assert db.read(lambda c: c.execute("PRAGMA foreign_keys").fetchone()) == (1,)
    finally:
        db.close()


def test_database_files_are_owner_only(tmp_path: Path) -> None:
    import stat

    from storage import layout
    from storage.database import Database

    folder = tmp_path / "site"
    layout.prepare(folder)
    db = Database.open(layout.database_path(folder))
    db.write_sync(lambda c: c.execute("CREATE TABLE x (a)"))
    try:
        for name in ("edge.db", "edge.db-wal"):
            assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    finally:
        db.close()


# -- 0019: data as a rowid table --------------------------------------------------------------
DATA_COLUMNS = (
    "group_id, path, value, unicode_1, number_1, created_by, created_date, last_updated_by,"
    " last_updated_date, updated_by_list, updated_date_list, revision, signature"
)


def test_0019_keeps_every_entry_and_looks_entries_up_by_key(tmp_path: Path) -> None:
    """Entries, their index fields and a value spilling onto overflow pages survive the
    rebuild; the key stays unique; a point read goes through the key's index, never a scan."""
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=18)
    big = '"' + "é" * 300_000 + '"'
    rows = [
        ("g1", "/a", big, "pump", 2.5, "u", "d1", "u", "d2", '["u"]', '["d2"]', 3, "sig-a"),
        ("g1", "/a/b", "[1,2]", None, None, "u", "d1", "u", "d1", '["u"]', '["d1"]', 1, "sig-b"),
        ("g2", "/a", '{"k":null}', "x", 7, "v", "d3", "v", "d3", '["v"]', '["d3"]', 1, "sig-c"),
    ]
    conn = apsw.Connection(str(db))
    marks = ", ".join("?" for _ in rows[0])
    for row in rows:
        conn.execute(f"INSERT INTO data ({DATA_COLUMNS}) VALUES ({marks})", row)
    conn.close()
    assert migrate.apply_pending(db) == [m.name for m in migrate.available()[18:]]
    conn = apsw.Connection(str(db))
    try:
        kept = conn.execute(f"SELECT {DATA_COLUMNS} FROM data ORDER BY group_id, path").fetchall()
        assert kept == rows
        with pytest.raises(apsw.ConstraintError):
            conn.execute(f"INSERT INTO data ({DATA_COLUMNS}) VALUES ({marks})", rows[1])
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT value FROM data WHERE group_id = ? AND path = ?", ("g", "/")
        ).fetchall()
        assert "USING INDEX data_by_path" in plan[0][-1]
        indexes = {n for (n,) in conn.execute("SELECT name FROM pragma_index_list('data')")}
        assert {"data_by_path", "data_by_unicode_1", "data_by_last_updated_date"} <= indexes
        last = conn.execute("SELECT name FROM pragma_table_info('data') ORDER BY cid DESC")
        assert last.fetchone() == ("value",)  # no other column sits behind a long value
    finally:
        conn.close()


# -- 0020: who retains each MQTT message ---------------------------------------------------------
def test_0020_keeps_retained_messages_with_no_owner(tmp_path: Path) -> None:
    """Messages retained before 0020 stay, owned by no account (counted against none)."""
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=19)
    conn = apsw.Connection(str(db))
    conn.execute(
        "INSERT INTO mqtt_retained (topic, payload, qos, updated_at) VALUES (?, ?, ?, ?)",
        ("org/sensors/a", b"on", 1, "2026-01-01T00:00:00Z"),
    )
    conn.close()
    assert migrate.apply_pending(db) == [m.name for m in migrate.available()[19:]]
    conn = apsw.Connection(str(db))
    try:
        assert mqtt_retained.every(conn) == [
            mqtt_retained.RetainedRecord("org/sensors/a", b"on", 1, None)
        ]
    finally:
        conn.close()


# -- 0021: names beside IDs in the audit log ---------------------------------------------------
def test_0021_keeps_events_and_adds_their_names(tmp_path: Path) -> None:
    """Events written before 0021 stay as they were, with no names; new ones take both."""
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=20)
    conn = apsw.Connection(str(db))
    conn.execute(
        "INSERT INTO audit_events (id, created_date, action, actor_kind, details)"
        " VALUES ('e1', '2026-01-01T00:00:00.000000Z', 'sign_in', 'user', '{\"a\": 1}')"
    )
    conn.close()
    assert migrate.apply_pending(db) == [m.name for m in migrate.available()[20:]]
    conn = apsw.Connection(str(db))
    try:
        row = conn.execute(
            "SELECT action, details, actor_name, target_name FROM audit_events"
        ).fetchall()
        assert row == [("sign_in", '{"a": 1}', None, None)]
        conn.execute(
            "INSERT INTO audit_events (id, created_date, action, actor_kind, actor_name,"
            " target_name) VALUES ('e2', '2026-01-02T00:00:00.000000Z', 'sign_in', 'user',"
            " 'ann', 'ann')"
        )
    finally:
        conn.close()


# -- 0034: a job's targets out of its row ----------------------------------------------------
def test_0034_keeps_each_jobs_targets_in_their_own_table(tmp_path: Path) -> None:
    """A job made before 0034 shows the same targets after it; its row no longer holds them."""
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=33)
    seed(db, 33)
    conn = apsw.Connection(str(db))
    targets = '{"device_ids": ["dev0000000000001", "dev0000000000002"]}'
    conn.execute(
        "INSERT INTO jobs (id, org_id, description, document, targets, continuous, policy,"
        " state, window_start, created_date, created_by, last_updated_date, target_limit)"
        " VALUES ('job1', 'org0000000000001', '', '{}', ?, 0, '{}', 'IN_PROGRESS', 'w',"
        " 'c', 'u', 'l', 10000)",
        (targets,),
    )
    conn.close()
    migrate.apply_pending(db)
    conn = apsw.Connection(str(db))
    try:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(jobs)")]
        kept = conn.execute("SELECT job_id, targets FROM job_targets").fetchall()
        assert "targets" not in columns and kept == [("job1", targets)]
        conn.execute("PRAGMA foreign_keys = ON")  # as storage/pragmas.py opens every connection
        conn.execute("DELETE FROM jobs WHERE id = 'job1'")
        assert conn.execute("SELECT count(*) FROM job_targets").fetchone() == (0,)
    finally:
        conn.close()


def test_0036_indexes_the_files_jobs_trash_and_claims_stored_before_it(tmp_path: Path) -> None:
    """What was stored before 0036 is found by a search after it, and a change of a
    searched column is found by its new words only."""
    db = tmp_path / "edge.db"
    migrate.apply_pending(db, upto=35)
    seed(db, 35)
    conn = apsw.Connection(str(db))
    org, day = "org0000000000001", "2026-01-01T00:00:00.000000Z"
    conn.execute(
        "INSERT INTO files (id, org_id, group_id, path, filename, size, etag, unicode_3,"
        " revision, uploaded_date, updated_by_list, updated_date_list, created_date,"
        " last_updated_date) VALUES ('file1', ?, 'grp1', '/scans/knee.png', 'knee.png', 1,"
        " 'e', 'Left side', 1, ?, '[]', '[]', ?, ?)",
        (org, day, day, day),
    )
    conn.execute(
        "INSERT INTO jobs (id, org_id, description, document, continuous, policy, state,"
        " window_start, created_date, created_by, last_updated_date, target_limit)"
        " VALUES ('job1', ?, 'Firmware for pumps', '{}', 0, '{}', 'SCHEDULED', 'w', ?, 'u', ?,"
        " 10)",
        (org, day, day),
    )
    conn.execute(
        "INSERT INTO trash (id, kind, org_id, name, deleted_date, purge_after, payload)"
        " VALUES ('gone1', 'group', ?, 'Night team', ?, ?, '{}')",
        (org, day, day),
    )
    conn.execute(
        "INSERT INTO provisioning_claims (id, org_id, name, secret_hash, max_uses,"
        " expires_date, created_date) VALUES ('claim1', ?, 'Line 4', 'h', 1, ?, ?)",
        (org, day, day),
    )
    conn.close()
    migrate.apply_pending(db)
    conn = apsw.Connection(str(db))
    try:
        for table, words, row_id in (
            ("files", "scans knee left", "file1"),
            ("jobs", "firmware pump", "job1"),
            ("trash", "night group", "gone1"),
            ("provisioning_claims", "line 4", "claim1"),
        ):
            match = " ".join(f'"{w}"*' for w in words.split())
            found = conn.execute(
                f"SELECT id FROM {table} WHERE rowid IN"
                f" (SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ?)",
                (match,),
            ).fetchall()
            assert found == [(row_id,)], table
        conn.execute("UPDATE files SET unicode_3 = 'Right side', revision = 2")
        matches = "SELECT count(*) FROM files_fts WHERE files_fts MATCH ?"
        assert conn.execute(matches, ('"left"',)).fetchone() == (0,)
        assert conn.execute(matches, ('"right"',)).fetchone() == (1,)
        conn.execute("DELETE FROM files")
        assert conn.execute("SELECT count(*) FROM files_fts").fetchone() == (0,)
    finally:
        conn.close()
