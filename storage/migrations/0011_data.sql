-- 0011: the data interface (docs/data.md). Per-group JSON documents keyed by path.
--
-- One row per entry, clustered by (group_id, path) (WITHOUT ROWID): a point read is one
-- b-tree lookup, and a subtree (`cascade`, `paths_only`, `path_filter`) is one range of
-- that b-tree read in path order. `value` is the JSON text of the value; `signature` is
-- the site's HMAC over the entry (edge/data/signing.py). There is no foreign key to
-- `groups`: a deleted group's data stays while the group waits in the trash.
CREATE TABLE data (
    group_id          TEXT NOT NULL,
    path              TEXT NOT NULL,
    value             TEXT NOT NULL,
    unicode_1         TEXT,
    unicode_2         TEXT,
    unicode_3         TEXT,
    unicode_4         TEXT,
    unicode_5         TEXT,
    unicode_6         TEXT,
    unicode_7         TEXT,
    unicode_8         TEXT,
    unicode_9         TEXT,
    unicode_10        TEXT,
    number_1          ANY CHECK (number_1 IS NULL OR typeof(number_1) IN ('integer', 'real')),
    number_2          ANY CHECK (number_2 IS NULL OR typeof(number_2) IN ('integer', 'real')),
    created_by        TEXT NOT NULL,
    created_date      TEXT NOT NULL,
    last_updated_by   TEXT NOT NULL,
    last_updated_date TEXT NOT NULL,
    updated_by_list   TEXT NOT NULL,
    updated_date_list TEXT NOT NULL,
    revision          INTEGER NOT NULL,
    signature         TEXT NOT NULL,
    PRIMARY KEY (group_id, path)
) STRICT, WITHOUT ROWID;

-- The index fields: each index holds only the entries that have the field (partial), in
-- (value, path) order, so an equality filter lists its matches in path order and
-- `order_by` a field walks its index. Entries without the field cost nothing here.
CREATE INDEX data_by_unicode_1 ON data (group_id, unicode_1, path) WHERE unicode_1 IS NOT NULL;
CREATE INDEX data_by_unicode_2 ON data (group_id, unicode_2, path) WHERE unicode_2 IS NOT NULL;
CREATE INDEX data_by_unicode_3 ON data (group_id, unicode_3, path) WHERE unicode_3 IS NOT NULL;
CREATE INDEX data_by_unicode_4 ON data (group_id, unicode_4, path) WHERE unicode_4 IS NOT NULL;
CREATE INDEX data_by_unicode_5 ON data (group_id, unicode_5, path) WHERE unicode_5 IS NOT NULL;
CREATE INDEX data_by_unicode_6 ON data (group_id, unicode_6, path) WHERE unicode_6 IS NOT NULL;
CREATE INDEX data_by_unicode_7 ON data (group_id, unicode_7, path) WHERE unicode_7 IS NOT NULL;
CREATE INDEX data_by_unicode_8 ON data (group_id, unicode_8, path) WHERE unicode_8 IS NOT NULL;
CREATE INDEX data_by_unicode_9 ON data (group_id, unicode_9, path) WHERE unicode_9 IS NOT NULL;
CREATE INDEX data_by_unicode_10 ON data (group_id, unicode_10, path)
    WHERE unicode_10 IS NOT NULL;
CREATE INDEX data_by_number_1 ON data (group_id, number_1, path) WHERE number_1 IS NOT NULL;
CREATE INDEX data_by_number_2 ON data (group_id, number_2, path) WHERE number_2 IS NOT NULL;
-- Ordering by creation or last change.
CREATE INDEX data_by_created_date ON data (group_id, created_date, path);
CREATE INDEX data_by_last_updated_date ON data (group_id, last_updated_date, path);

-- Groups whose data must be erased: erased in small batches by a background task
-- (edge/data/eraser.py), so erasing a million entries never holds the writer for long.
-- Data requests name their group, so queued data is unreachable from the moment it is queued.
CREATE TABLE data_erasures (
    group_id TEXT PRIMARY KEY
) STRICT;

-- A group gone for good: deleted permanently, or with its organization. A group that
-- went to the trash (itself, or inside its project's trash entry) keeps its data.
CREATE TRIGGER data_erase_deleted_group AFTER DELETE ON groups
WHEN NOT EXISTS (SELECT 1 FROM trash WHERE trash.id IN (old.id, old.project_id))
BEGIN
    INSERT OR IGNORE INTO data_erasures (group_id) VALUES (old.id);
END;

-- A trash entry erased (DELETE /v2/trash/{id}, the retention sweep, its organization
-- deleted): the groups it held are gone for good. A restore also drops the entry, but it
-- puts the groups back first, so their data stays.
CREATE TRIGGER data_erase_trashed_groups AFTER DELETE ON trash
BEGIN
    INSERT OR IGNORE INTO data_erasures (group_id)
    SELECT json_extract(kept.value, '$.id') FROM json_each(old.payload, '$.groups') AS kept
    WHERE NOT EXISTS (SELECT 1 FROM groups WHERE groups.id = json_extract(kept.value, '$.id'));
END;
