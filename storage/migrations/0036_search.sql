-- 0036: full-text search on the lists that answered `?search=` with an empty page as if
-- nothing matched (docs/lists.md "Search"): a group's files (path, file name and text
-- index fields), jobs (description), the trash (name and kind) and provisioning claims
-- (name). Each index is kept by triggers, as 0001 and 0003 keep those of orgs and
-- accounts, and is filled here from the rows already stored. An update re-indexes a row
-- only when a searched column changes: a job's progress or a file's revision costs nothing.
CREATE VIRTUAL TABLE files_fts USING fts5 (
    path, filename, unicode_1, unicode_2, unicode_3, unicode_4, unicode_5, unicode_6,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER files_fts_insert AFTER INSERT ON files BEGIN
    INSERT INTO files_fts (rowid, path, filename, unicode_1, unicode_2, unicode_3, unicode_4,
        unicode_5, unicode_6)
    VALUES (new.rowid, new.path, new.filename, coalesce(new.unicode_1, ''),
        coalesce(new.unicode_2, ''), coalesce(new.unicode_3, ''), coalesce(new.unicode_4, ''),
        coalesce(new.unicode_5, ''), coalesce(new.unicode_6, ''));
END;
CREATE TRIGGER files_fts_update
AFTER UPDATE OF path, filename, unicode_1, unicode_2, unicode_3, unicode_4, unicode_5, unicode_6
ON files BEGIN
    DELETE FROM files_fts WHERE rowid = old.rowid;
    INSERT INTO files_fts (rowid, path, filename, unicode_1, unicode_2, unicode_3, unicode_4,
        unicode_5, unicode_6)
    VALUES (new.rowid, new.path, new.filename, coalesce(new.unicode_1, ''),
        coalesce(new.unicode_2, ''), coalesce(new.unicode_3, ''), coalesce(new.unicode_4, ''),
        coalesce(new.unicode_5, ''), coalesce(new.unicode_6, ''));
END;
CREATE TRIGGER files_fts_delete AFTER DELETE ON files BEGIN
    DELETE FROM files_fts WHERE rowid = old.rowid;
END;
INSERT INTO files_fts (rowid, path, filename, unicode_1, unicode_2, unicode_3, unicode_4,
    unicode_5, unicode_6)
SELECT rowid, path, filename, coalesce(unicode_1, ''), coalesce(unicode_2, ''),
    coalesce(unicode_3, ''), coalesce(unicode_4, ''), coalesce(unicode_5, ''),
    coalesce(unicode_6, '')
FROM files;

CREATE VIRTUAL TABLE jobs_fts USING fts5 (
    description, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER jobs_fts_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO jobs_fts (rowid, description) VALUES (new.rowid, new.description);
END;
CREATE TRIGGER jobs_fts_update AFTER UPDATE OF description ON jobs BEGIN
    DELETE FROM jobs_fts WHERE rowid = old.rowid;
    INSERT INTO jobs_fts (rowid, description) VALUES (new.rowid, new.description);
END;
CREATE TRIGGER jobs_fts_delete AFTER DELETE ON jobs BEGIN
    DELETE FROM jobs_fts WHERE rowid = old.rowid;
END;
INSERT INTO jobs_fts (rowid, description) SELECT rowid, description FROM jobs;

CREATE VIRTUAL TABLE trash_fts USING fts5 (
    name, kind, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER trash_fts_insert AFTER INSERT ON trash BEGIN
    INSERT INTO trash_fts (rowid, name, kind) VALUES (new.rowid, new.name, new.kind);
END;
CREATE TRIGGER trash_fts_update AFTER UPDATE OF name, kind ON trash BEGIN
    DELETE FROM trash_fts WHERE rowid = old.rowid;
    INSERT INTO trash_fts (rowid, name, kind) VALUES (new.rowid, new.name, new.kind);
END;
CREATE TRIGGER trash_fts_delete AFTER DELETE ON trash BEGIN
    DELETE FROM trash_fts WHERE rowid = old.rowid;
END;
INSERT INTO trash_fts (rowid, name, kind) SELECT rowid, name, kind FROM trash;

CREATE VIRTUAL TABLE provisioning_claims_fts USING fts5 (
    name, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER provisioning_claims_fts_insert AFTER INSERT ON provisioning_claims BEGIN
    INSERT INTO provisioning_claims_fts (rowid, name) VALUES (new.rowid, new.name);
END;
CREATE TRIGGER provisioning_claims_fts_update AFTER UPDATE OF name ON provisioning_claims BEGIN
    DELETE FROM provisioning_claims_fts WHERE rowid = old.rowid;
    INSERT INTO provisioning_claims_fts (rowid, name) VALUES (new.rowid, new.name);
END;
CREATE TRIGGER provisioning_claims_fts_delete AFTER DELETE ON provisioning_claims BEGIN
    DELETE FROM provisioning_claims_fts WHERE rowid = old.rowid;
END;
INSERT INTO provisioning_claims_fts (rowid, name) SELECT rowid, name FROM provisioning_claims;
