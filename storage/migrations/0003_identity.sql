-- 0003: the tenant model. Projects, groups and roles; the full user profile; one table of
-- access objects (org, project, group and role access) that the permission engine reads.

CREATE TABLE projects (
    id                  TEXT PRIMARY KEY,
    org_id              TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
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
CREATE INDEX projects_by_org ON projects (org_id, created_date, id);

CREATE TABLE groups (
    id                                    TEXT PRIMARY KEY,
    org_id                                TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    project_id                            TEXT REFERENCES projects (id) ON DELETE CASCADE,
    name                                  TEXT NOT NULL,
    name_folded                           TEXT NOT NULL,
    description                           TEXT NOT NULL DEFAULT '',
    tags                                  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    is_active                             INTEGER NOT NULL DEFAULT 1,
    is_delete_protected                   INTEGER NOT NULL DEFAULT 0,
    require_delete_permission_to_put_data INTEGER NOT NULL DEFAULT 0,
    role_delete_protection_on_by_default  INTEGER NOT NULL DEFAULT 0,
    num_history                           INTEGER NOT NULL DEFAULT 10,
    created_date                          TEXT NOT NULL,
    created_by                            TEXT,
    last_updated_date                     TEXT NOT NULL,
    last_updated_by                       TEXT
) STRICT;
CREATE INDEX groups_by_org ON groups (org_id, project_id, created_date, id);

CREATE TABLE roles (
    id                           TEXT PRIMARY KEY,
    org_id                       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    project_id                   TEXT REFERENCES projects (id) ON DELETE CASCADE,
    name                         TEXT NOT NULL,
    name_folded                  TEXT NOT NULL,
    description                  TEXT NOT NULL DEFAULT '',
    tags                         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    is_active                    INTEGER NOT NULL DEFAULT 1,
    is_delete_protected          INTEGER NOT NULL DEFAULT 0,
    custom_attributes            TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(custom_attributes)),
    restricted_custom_attributes TEXT NOT NULL DEFAULT '{}'
                                 CHECK (json_valid(restricted_custom_attributes)),
    created_date                 TEXT NOT NULL,
    created_by                   TEXT,
    last_updated_date            TEXT NOT NULL,
    last_updated_by              TEXT
) STRICT;
CREATE INDEX roles_by_org ON roles (org_id, project_id, created_date, id);

-- The full user profile. Org admin status moves to org access objects (below).
ALTER TABLE users ADD COLUMN project_id TEXT REFERENCES projects (id) ON DELETE CASCADE;
ALTER TABLE users ADD COLUMN phone_number TEXT;
ALTER TABLE users ADD COLUMN phone_folded TEXT;
ALTER TABLE users ADD COLUMN phone_number_verified INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN pending_phone_number TEXT;
ALTER TABLE users ADD COLUMN first_name TEXT;
ALTER TABLE users ADD COLUMN middle_name TEXT;
ALTER TABLE users ADD COLUMN last_name TEXT;
ALTER TABLE users ADD COLUMN nickname TEXT;
ALTER TABLE users ADD COLUMN locale TEXT NOT NULL DEFAULT 'en-US';
ALTER TABLE users ADD COLUMN zoneinfo TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE users ADD COLUMN picture TEXT;
ALTER TABLE users ADD COLUMN tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags));
ALTER TABLE users ADD COLUMN custom_attributes TEXT NOT NULL DEFAULT '{}'
    CHECK (json_valid(custom_attributes));
ALTER TABLE users ADD COLUMN restricted_custom_attributes TEXT NOT NULL DEFAULT '{}'
    CHECK (json_valid(restricted_custom_attributes));
ALTER TABLE users ADD COLUMN has_temporary_password INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN new_password_required INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN is_delete_protected INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN preferred_mfa TEXT;
ALTER TABLE users ADD COLUMN sms_mfa_enabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN software_mfa_enabled INTEGER NOT NULL DEFAULT 0;
CREATE INDEX users_by_org ON users (org_id, project_id, created_date, id);
CREATE INDEX users_by_phone ON users (org_id, phone_folded);

-- Pictures are large and rarely read: kept out of the hot account rows.
CREATE TABLE pictures (
    account_id   TEXT PRIMARY KEY,
    content_type TEXT NOT NULL,
    data         BLOB NOT NULL,
    updated_date TEXT NOT NULL
) STRICT;

-- Per-user dashboard configuration.
CREATE TABLE dashboards (
    account_id   TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    config       TEXT NOT NULL CHECK (json_valid(config)),
    updated_date TEXT NOT NULL
) STRICT;

-- Access objects: a grantee (user, device or role) holds access to a target (the org, a
-- project, a group, or a role). Permission blocks are JSON objects of CRUD flags.
CREATE TABLE access (
    id                  TEXT PRIMARY KEY,
    kind                TEXT NOT NULL CHECK (kind IN ('org', 'project', 'group', 'role')),
    target_id           TEXT NOT NULL,
    grantee_id          TEXT NOT NULL,
    grantee_kind        TEXT NOT NULL CHECK (grantee_kind IN ('user', 'device', 'role')),
    org_id              TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    is_admin            INTEGER NOT NULL DEFAULT 0,
    can_read            INTEGER NOT NULL DEFAULT 0,
    can_update          INTEGER NOT NULL DEFAULT 0,
    permissions         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(permissions)),
    data_paths          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(data_paths)),
    file_paths          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(file_paths)),
    tags                TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    is_active           INTEGER NOT NULL DEFAULT 1,
    is_delete_protected INTEGER NOT NULL DEFAULT 0,
    created_date        TEXT NOT NULL,
    created_by          TEXT,
    last_updated_date   TEXT NOT NULL,
    last_updated_by     TEXT,
    UNIQUE (target_id, grantee_id)
) STRICT;
CREATE INDEX access_by_grantee ON access (grantee_id, kind);
CREATE INDEX access_by_target ON access (target_id, kind);

INSERT INTO access (id, kind, target_id, grantee_id, grantee_kind, org_id, is_admin, can_read,
                    can_update, created_date, last_updated_date)
SELECT org_id || substr(id, 1, 13), 'org', org_id, id, 'user', org_id, 1, 1, 1,
       created_date, created_date
FROM users WHERE is_org_admin = 1;
ALTER TABLE users DROP COLUMN is_org_admin;

-- Whatever is deleted takes its access objects with it, both ways.
CREATE TRIGGER users_drop_access AFTER DELETE ON users BEGIN
    DELETE FROM access WHERE grantee_id = old.id OR target_id = old.id;
    DELETE FROM pictures WHERE account_id = old.id;
END;
CREATE TRIGGER projects_drop_access AFTER DELETE ON projects BEGIN
    DELETE FROM access WHERE target_id = old.id;
    DELETE FROM aliases WHERE owner_id = old.id;
END;
CREATE TRIGGER groups_drop_access AFTER DELETE ON groups BEGIN
    DELETE FROM access WHERE target_id = old.id;
END;
CREATE TRIGGER roles_drop_access AFTER DELETE ON roles BEGIN
    DELETE FROM access WHERE target_id = old.id OR grantee_id = old.id;
END;

-- Full-text search over each listable resource, kept current by triggers.
CREATE VIRTUAL TABLE projects_fts USING fts5 (
    id UNINDEXED, name, alias, description, tags, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER projects_fts_insert AFTER INSERT ON projects BEGIN
    INSERT INTO projects_fts (rowid, id, name, alias, description, tags) VALUES (new.rowid, new.id, new.name, coalesce(new.alias, ''), new.description, (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER projects_fts_update AFTER UPDATE ON projects BEGIN
    DELETE FROM projects_fts WHERE rowid = old.rowid;
    INSERT INTO projects_fts (rowid, id, name, alias, description, tags) VALUES (new.rowid, new.id, new.name, coalesce(new.alias, ''), new.description, (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER projects_fts_delete AFTER DELETE ON projects BEGIN
    DELETE FROM projects_fts WHERE rowid = old.rowid;
END;

CREATE VIRTUAL TABLE groups_fts USING fts5 (
    id UNINDEXED, name, description, tags, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER groups_fts_insert AFTER INSERT ON groups BEGIN
    INSERT INTO groups_fts (rowid, id, name, description, tags) VALUES (new.rowid, new.id, new.name, new.description, (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER groups_fts_update AFTER UPDATE ON groups BEGIN
    DELETE FROM groups_fts WHERE rowid = old.rowid;
    INSERT INTO groups_fts (rowid, id, name, description, tags) VALUES (new.rowid, new.id, new.name, new.description, (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER groups_fts_delete AFTER DELETE ON groups BEGIN
    DELETE FROM groups_fts WHERE rowid = old.rowid;
END;

CREATE VIRTUAL TABLE roles_fts USING fts5 (
    id UNINDEXED, name, description, tags, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER roles_fts_insert AFTER INSERT ON roles BEGIN
    INSERT INTO roles_fts (rowid, id, name, description, tags) VALUES (new.rowid, new.id, new.name, new.description, (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER roles_fts_update AFTER UPDATE ON roles BEGIN
    DELETE FROM roles_fts WHERE rowid = old.rowid;
    INSERT INTO roles_fts (rowid, id, name, description, tags) VALUES (new.rowid, new.id, new.name, new.description, (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER roles_fts_delete AFTER DELETE ON roles BEGIN
    DELETE FROM roles_fts WHERE rowid = old.rowid;
END;

CREATE VIRTUAL TABLE users_fts USING fts5 (
    id UNINDEXED, username, email, first_name, last_name, nickname, phone_number, tags, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER users_fts_insert AFTER INSERT ON users BEGIN
    INSERT INTO users_fts (rowid, id, username, email, first_name, last_name, nickname, phone_number, tags) VALUES (new.rowid, new.id, new.username, new.email, coalesce(new.first_name, ''), coalesce(new.last_name, ''), coalesce(new.nickname, ''), coalesce(new.phone_number, ''), (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER users_fts_update AFTER UPDATE ON users BEGIN
    DELETE FROM users_fts WHERE rowid = old.rowid;
    INSERT INTO users_fts (rowid, id, username, email, first_name, last_name, nickname, phone_number, tags) VALUES (new.rowid, new.id, new.username, new.email, coalesce(new.first_name, ''), coalesce(new.last_name, ''), coalesce(new.nickname, ''), coalesce(new.phone_number, ''), (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER users_fts_delete AFTER DELETE ON users BEGIN
    DELETE FROM users_fts WHERE rowid = old.rowid;
END;
INSERT INTO users_fts (rowid, id, username, email, first_name, last_name, nickname, phone_number, tags)
SELECT rowid, id, username, email, '', '', '', '', '' FROM users;
