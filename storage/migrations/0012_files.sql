-- 0012: the files interface. An index row per file (path, S3 ETag, size, index fields);
-- the bytes live in the data folder's blobs/ (storage/blobs.py), one blob per file, or one
-- per part for a multipart file (file_blobs, in order). A blob is in place before its row is
-- committed, and a blob whose row goes (the file deleted or overwritten, its group or org
-- erased) is queued in file_blobs_gone by trigger, in the same transaction, to be unlinked
-- after the commit or by the next sweep: no row ever names a missing blob (docs/files.md).

-- No foreign key to groups: a deleted group's files wait in place while the group is in the
-- trash, and are erased with it (storage/trash.py).
CREATE TABLE files (
    id                TEXT PRIMARY KEY,
    org_id            TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    group_id          TEXT NOT NULL,
    path              TEXT NOT NULL,
    filename          TEXT NOT NULL,
    size              INTEGER NOT NULL,
    etag              TEXT NOT NULL,
    content_type      TEXT,
    unicode_1         TEXT,
    unicode_2         TEXT,
    unicode_3         TEXT,
    unicode_4         TEXT,
    unicode_5         TEXT,
    unicode_6         TEXT,
    number_1          REAL,
    number_2          REAL,
    revision          INTEGER NOT NULL,
    uploaded_date     TEXT NOT NULL,
    updated_by_list   TEXT NOT NULL CHECK (json_valid(updated_by_list)),
    updated_date_list TEXT NOT NULL CHECK (json_valid(updated_date_list)),
    created_date      TEXT NOT NULL,
    created_by        TEXT,
    last_updated_date TEXT NOT NULL,
    last_updated_by   TEXT,
    UNIQUE (group_id, path)
) STRICT;

-- The blobs that hold a file's bytes, in order (`seq`): one, or one per part.
CREATE TABLE file_blobs (
    blob    TEXT PRIMARY KEY,
    file_id TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    size    INTEGER NOT NULL,
    UNIQUE (file_id, seq)
) STRICT;

-- Blobs whose rows are gone, waiting to be unlinked (after the commit, or by the sweep while
-- a backup holds the blobs).
CREATE TABLE file_blobs_gone (
    blob      TEXT PRIMARY KEY,
    gone_date TEXT NOT NULL
) STRICT;

-- Bytes and files held per group, and in all (scope '*'), kept by triggers so that a quota
-- check is one point read.
CREATE TABLE file_usage (
    scope TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL,
    files INTEGER NOT NULL
) STRICT;

CREATE TRIGGER files_added AFTER INSERT ON files BEGIN
    INSERT INTO file_usage (scope, bytes, files) VALUES (new.group_id, new.size, 1), ('*', new.size, 1)
    ON CONFLICT (scope) DO UPDATE SET bytes = bytes + excluded.bytes, files = files + 1;
END;
CREATE TRIGGER files_resized AFTER UPDATE OF size ON files WHEN new.size IS NOT old.size BEGIN
    UPDATE file_usage SET bytes = bytes + new.size - old.size WHERE scope IN (new.group_id, '*');
END;
CREATE TRIGGER files_removed AFTER DELETE ON files BEGIN
    UPDATE file_usage SET bytes = bytes - old.size, files = files - 1
    WHERE scope IN (old.group_id, '*');
END;
-- Fires for every way a blob row goes: replaced by an overwrite, or deleted with its file
-- (the foreign key's cascade runs this trigger too).
CREATE TRIGGER file_blobs_removed AFTER DELETE ON file_blobs BEGIN
    INSERT OR IGNORE INTO file_blobs_gone (blob, gone_date)
    VALUES (old.blob, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

-- Upload sessions: what a presigned upload URL was issued for. `num_parts` is NULL for a
-- single-part upload; `rights` holds the permissions checked when the URLs were issued;
-- `fields` the content type and index fields the file gets when the upload completes.
CREATE TABLE file_uploads (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    group_id     TEXT NOT NULL,
    path         TEXT NOT NULL,
    num_parts    INTEGER,
    rights       TEXT NOT NULL CHECK (json_valid(rights)),
    fields       TEXT NOT NULL CHECK (json_valid(fields)),
    created_by   TEXT,
    created_date TEXT NOT NULL,
    expires      TEXT NOT NULL
) STRICT;
CREATE INDEX file_uploads_by_group ON file_uploads (group_id);
CREATE INDEX file_uploads_by_expiry ON file_uploads (expires);

-- Parts received for a multipart upload; `file` names the part's bytes in uploads/<id>/.
CREATE TABLE file_upload_parts (
    upload_id   TEXT NOT NULL REFERENCES file_uploads (id) ON DELETE CASCADE,
    part_number INTEGER NOT NULL,
    file        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    md5         TEXT NOT NULL,
    PRIMARY KEY (upload_id, part_number)
) STRICT;
