-- 0004: e-mail templates, and what the outbox worker needs to deliver them.
-- Templates belong to an org (project_id NULL) or to one of its projects; the texts use the
-- `{{ name }}` syntax of edge/templating.py and are checked when written.

CREATE TABLE email_templates (
    id                   TEXT PRIMARY KEY,
    org_id               TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    project_id           TEXT REFERENCES projects (id) ON DELETE CASCADE,
    name                 TEXT NOT NULL,
    name_folded          TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    subject              TEXT NOT NULL,
    body_txt             TEXT NOT NULL,
    body_html            TEXT NOT NULL,
    from_address         TEXT,
    locale               TEXT NOT NULL,
    custom_args          TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(custom_args)),
    for_account_recovery INTEGER NOT NULL DEFAULT 0,
    for_new_users        INTEGER NOT NULL DEFAULT 0,
    tags                 TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    is_active            INTEGER NOT NULL DEFAULT 1,
    is_delete_protected  INTEGER NOT NULL DEFAULT 0,
    created_date         TEXT NOT NULL,
    created_by           TEXT,
    last_updated_date    TEXT NOT NULL,
    last_updated_by      TEXT
) STRICT;
CREATE INDEX email_templates_by_org ON email_templates (org_id, project_id, created_date, id);

CREATE VIRTUAL TABLE email_templates_fts USING fts5 (
    id UNINDEXED, name, description, subject, tags, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER email_templates_fts_insert AFTER INSERT ON email_templates BEGIN
    INSERT INTO email_templates_fts (rowid, id, name, description, subject, tags) VALUES (new.rowid, new.id, new.name, new.description, new.subject, (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER email_templates_fts_update AFTER UPDATE ON email_templates BEGIN
    DELETE FROM email_templates_fts WHERE rowid = old.rowid;
    INSERT INTO email_templates_fts (rowid, id, name, description, subject, tags) VALUES (new.rowid, new.id, new.name, new.description, new.subject, (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER email_templates_fts_delete AFTER DELETE ON email_templates BEGIN
    DELETE FROM email_templates_fts WHERE rowid = old.rowid;
END;

-- The sender a template names (else the `mail_from` setting).
ALTER TABLE outbox ADD COLUMN from_address TEXT;
