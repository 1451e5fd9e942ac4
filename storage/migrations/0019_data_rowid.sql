-- 0019: data as a rowid table keyed by a unique index, its `value` last.
--
-- 0011 clustered the entries by (group_id, path) (WITHOUT ROWID). SQLite compares the keys
-- of such a table as whole records: one whose value spills onto overflow pages is read in
-- full, every page of it, each time a lookup passes it on its way down. A point read of a
-- small entry among entries of 1 MB took 733 µs instead of 21, and a page of a cascade
-- read its neighbours' megabytes once per entry (SQLite's own advice: WITHOUT ROWID for
-- small rows). Now (group_id, path) is a unique index that holds only the keys, a lookup
-- compares keys alone and finds its row by rowid, and a range in path order is still one
-- range of that index. `value` comes last, so reading any other column of a row never
-- walks the value's overflow pages.
CREATE TABLE data_rows (
    group_id          TEXT NOT NULL,
    path              TEXT NOT NULL,
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
    value             TEXT NOT NULL
) STRICT;

INSERT INTO data_rows (
    group_id, path, unicode_1, unicode_2, unicode_3, unicode_4, unicode_5, unicode_6,
    unicode_7, unicode_8, unicode_9, unicode_10, number_1, number_2, created_by,
    created_date, last_updated_by, last_updated_date, updated_by_list, updated_date_list,
    revision, signature, value
)
SELECT
    group_id, path, unicode_1, unicode_2, unicode_3, unicode_4, unicode_5, unicode_6,
    unicode_7, unicode_8, unicode_9, unicode_10, number_1, number_2, created_by,
    created_date, last_updated_by, last_updated_date, updated_by_list, updated_date_list,
    revision, signature, value
FROM data ORDER BY group_id, path;

DROP TABLE data;  -- and its indexes
ALTER TABLE data_rows RENAME TO data;

CREATE UNIQUE INDEX data_by_path ON data (group_id, path);
-- The index fields and dates, as in 0011.
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
CREATE INDEX data_by_created_date ON data (group_id, created_date, path);
CREATE INDEX data_by_last_updated_date ON data (group_id, last_updated_date, path);
