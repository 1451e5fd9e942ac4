-- 0001: staff, organizations, installation-wide aliases, org users (first admin), sessions.
-- Timestamps are fixed-width ISO 8601 UTC text ('YYYY-MM-DDTHH:MM:SS.ffffffZ'): they sort as text.

CREATE TABLE staff (
    id                    TEXT PRIMARY KEY,
    username              TEXT NOT NULL,
    username_folded       TEXT NOT NULL UNIQUE,
    email                 TEXT NOT NULL,
    email_folded          TEXT NOT NULL UNIQUE,
    password_hash         TEXT NOT NULL,
    password_last_changed TEXT NOT NULL,
    created_date          TEXT NOT NULL,
    last_updated_date     TEXT NOT NULL
) STRICT;

-- Org and project aliases are unique across the whole installation: one table holds them all.
CREATE TABLE aliases (
    alias_folded TEXT PRIMARY KEY,
    owner_kind   TEXT NOT NULL CHECK (owner_kind IN ('org', 'project')),
    owner_id     TEXT NOT NULL
) STRICT;

CREATE TABLE orgs (
    id                  TEXT PRIMARY KEY,
    name                TEXT NOT NULL,
    name_folded         TEXT NOT NULL,
    alias               TEXT,
    description         TEXT NOT NULL DEFAULT '',
    tags                TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    is_active           INTEGER NOT NULL DEFAULT 1,
    is_delete_protected INTEGER NOT NULL DEFAULT 0,
    settings            TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
    created_date        TEXT NOT NULL,
    created_by          TEXT,
    last_updated_date   TEXT NOT NULL,
    last_updated_by     TEXT
) STRICT;
CREATE INDEX orgs_by_created ON orgs (created_date, id);
CREATE INDEX orgs_by_name ON orgs (name_folded, id);

CREATE VIRTUAL TABLE orgs_fts USING fts5 (
    id UNINDEXED, name, alias, description, tags, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER orgs_fts_insert AFTER INSERT ON orgs BEGIN
    INSERT INTO orgs_fts (rowid, id, name, alias, description, tags)
    VALUES (new.rowid, new.id, new.name, coalesce(new.alias, ''), new.description,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER orgs_fts_update AFTER UPDATE ON orgs BEGIN
    UPDATE orgs_fts SET name = new.name, alias = coalesce(new.alias, ''),
        description = new.description,
        tags = (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags))
    WHERE rowid = old.rowid;
END;
CREATE TRIGGER orgs_fts_delete AFTER DELETE ON orgs BEGIN
    DELETE FROM orgs_fts WHERE rowid = old.rowid;
END;

-- Accounts inside an organization. The identity issue widens this table; the foundation
-- needs the first admin that `edge admin create-org` makes.
CREATE TABLE users (
    id                    TEXT PRIMARY KEY,
    org_id                TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    username              TEXT NOT NULL,
    username_folded       TEXT NOT NULL,
    email                 TEXT NOT NULL,
    email_folded          TEXT NOT NULL,
    password_hash         TEXT,
    password_last_changed TEXT,
    is_org_admin          INTEGER NOT NULL DEFAULT 0,
    is_active             INTEGER NOT NULL DEFAULT 1,
    created_date          TEXT NOT NULL,
    created_by            TEXT,
    last_updated_date     TEXT NOT NULL,
    last_updated_by       TEXT,
    UNIQUE (org_id, username_folded),
    UNIQUE (org_id, email_folded)
) STRICT;

-- One row per sign-in; access tokens carry its id, so deleting or revoking it ends them at once.
CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL,
    account_kind       TEXT NOT NULL CHECK (account_kind IN ('staff', 'user', 'device')),
    org_id             TEXT REFERENCES orgs (id) ON DELETE CASCADE,
    project_id         TEXT,
    refresh_hash       TEXT UNIQUE,
    created_date       TEXT NOT NULL,
    refresh_expires_at TEXT NOT NULL,
    revoked            INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX sessions_by_account ON sessions (account_id);
