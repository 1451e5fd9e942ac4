-- 0022: device twins (docs/twins.md). One document per device: `desired` (set by people
-- and programs), `reported` (set by the device), `metadata` (when each leaf was last set,
-- in the shape of the two), and `version`, one more on every accepted update. The row goes
-- with its device: to the trash and back with it (storage/trash.py), and away when the
-- device is erased. A device with no row has the empty twin at version 0.
CREATE TABLE device_twins (
    device_id    TEXT PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
    desired      TEXT NOT NULL CHECK (json_valid(desired)),
    reported     TEXT NOT NULL CHECK (json_valid(reported)),
    metadata     TEXT NOT NULL CHECK (json_valid(metadata)),
    version      INTEGER NOT NULL CHECK (version >= 1),
    updated_date TEXT NOT NULL
) STRICT;
