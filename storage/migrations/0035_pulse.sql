-- 0035: the site's pulse (docs/pulse.md): one-minute samples the console charts.
--
-- Every flush writes one row for the site (org_id '') and one for each organization that
-- counted something or has a device online; a minute with no row of the site's is a
-- minute the server was not running (a gap, not zeros). `started` and `ended` are the
-- span the counts cover, in milliseconds since the epoch: a rate is a count over it.
-- `disk_free` (bytes free on the data folder's disk) is the site's alone. Rows older than
-- pulse_retention_hours are deleted by the flush that writes new ones.
CREATE TABLE pulse_samples (
    org_id           TEXT NOT NULL,
    ended            INTEGER NOT NULL,
    started          INTEGER NOT NULL,
    requests         INTEGER NOT NULL DEFAULT 0,
    mqtt_messages    INTEGER NOT NULL DEFAULT 0,
    sign_in_failures INTEGER NOT NULL DEFAULT 0,
    devices_online   INTEGER NOT NULL DEFAULT 0,
    disk_free        INTEGER,
    PRIMARY KEY (org_id, ended)
) STRICT, WITHOUT ROWID;
-- The flush's prune deletes by age across every organization.
CREATE INDEX pulse_samples_by_end ON pulse_samples (ended);
