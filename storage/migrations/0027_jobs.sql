-- 0027: rollout jobs (docs/jobs.md). A job hands one JSON document (and, for firmware, a
-- pinned file of a group's files store) to every target device, a few at a time, under a
-- rollout policy; each target device has one execution of it.
--
-- The scheduler's state is all here, so a restart or a SIGKILL loses nothing and starts
-- nothing twice: an execution is released to its device (`released`, `deadline`) in the
-- same transaction that counts it against the job's rate window, and every change of an
-- execution's state is one conditional UPDATE. The counts per state are kept by triggers
-- in `job_counts`, so reading a job's counts, and the abort rule, never count executions.
--
-- Triggers on `devices` and `access` keep executions in step with the registry: a deleted
-- device's unfinished executions become REMOVED and come back with it from the trash (the
-- device row is deleted and re-inserted, storage/trash.py); a device that joins the
-- group, project or tags of a continuous job gets an execution of it.
CREATE TABLE jobs (
    id                TEXT PRIMARY KEY,
    org_id            TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    project_id        TEXT REFERENCES projects (id) ON DELETE CASCADE,
    description       TEXT NOT NULL,
    document          TEXT NOT NULL CHECK (json_valid(document)),
    -- What was asked: {"device_ids": [...]} | {"group_id": ...} | {"project_id": ...} |
    -- {"tags": [...]}; the three below are the same, as the continuous triggers read them.
    targets           TEXT NOT NULL CHECK (json_valid(targets)),
    target_group_id   TEXT,
    target_project_id TEXT,
    target_tags       TEXT CHECK (target_tags IS NULL OR json_valid(target_tags)),
    continuous        INTEGER NOT NULL,
    -- The firmware file, pinned by its ETag (all NULL for a job without one).
    artifact_group_id TEXT,
    artifact_path     TEXT,
    artifact_etag     TEXT,
    artifact_size     INTEGER,
    artifact_sha256   TEXT,
    policy            TEXT NOT NULL CHECK (json_valid(policy)),
    state             TEXT NOT NULL CHECK (state IN
                          ('SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'CANCELED', 'ABORTED')),
    reason            TEXT,                -- why it was canceled or aborted
    -- The rate window: executions released since `window_start` (one minute long).
    window_start      TEXT NOT NULL,
    window_released   INTEGER NOT NULL DEFAULT 0,
    created_date      TEXT NOT NULL,
    created_by        TEXT NOT NULL,
    last_updated_date TEXT NOT NULL,
    completed_date    TEXT
) STRICT;
CREATE INDEX jobs_by_org_created ON jobs (org_id, created_date, id);
-- The scheduler's work: the jobs still running (a handful, whatever their targets).
CREATE INDEX jobs_running ON jobs (state) WHERE state IN ('SCHEDULED', 'IN_PROGRESS');

CREATE TABLE job_executions (
    job_id            TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    -- No foreign key: a deleted device's executions stay (REMOVED), to come back with it.
    device_id         TEXT NOT NULL,
    org_id            TEXT NOT NULL,
    state             TEXT NOT NULL CHECK (state IN ('QUEUED', 'IN_PROGRESS', 'SUCCEEDED',
                          'FAILED', 'REJECTED', 'TIMED_OUT', 'CANCELED', 'REMOVED')),
    removed_from      TEXT,                -- the state it had when its device was deleted
    released          INTEGER NOT NULL DEFAULT 0,  -- offered to the device (notify-next)
    status_details    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(status_details)),
    progress          INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    version           INTEGER NOT NULL DEFAULT 1,
    attempts          INTEGER NOT NULL DEFAULT 0,  -- retries used
    queued_date       TEXT NOT NULL,
    ready_date        TEXT NOT NULL,       -- its place in the rollout's queue
    released_date     TEXT,
    started_date      TEXT,
    last_updated_date TEXT NOT NULL,
    finished_date     TEXT,
    deadline          TEXT,                -- released: when it times out
    id                TEXT GENERATED ALWAYS AS (device_id) VIRTUAL,  -- for the list engine
    PRIMARY KEY (job_id, device_id)
) STRICT;
-- The next executions to release, in queue order, found without reading the rest.
CREATE INDEX job_executions_waiting ON job_executions (job_id, ready_date)
    WHERE state = 'QUEUED' AND released = 0;
-- Released and unfinished: by deadline (timeouts) and by job (max in progress).
CREATE INDEX job_executions_due ON job_executions (deadline)
    WHERE released = 1 AND state IN ('QUEUED', 'IN_PROGRESS');
CREATE INDEX job_executions_active ON job_executions (job_id)
    WHERE released = 1 AND state IN ('QUEUED', 'IN_PROGRESS');
-- A device's executions (its jobs over HTTP and MQTT, the device triggers).
CREATE INDEX job_executions_by_device ON job_executions (device_id, state);
-- A job's executions, listed in the default order.
CREATE INDEX job_executions_listed ON job_executions (job_id, queued_date, device_id);

CREATE TABLE job_counts (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    state  TEXT NOT NULL,
    n      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, state)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER job_executions_counted AFTER INSERT ON job_executions BEGIN
    UPDATE job_counts SET n = n + 1 WHERE job_id = NEW.job_id AND state = NEW.state;
END;
CREATE TRIGGER job_executions_recounted AFTER UPDATE OF state ON job_executions
WHEN OLD.state <> NEW.state BEGIN
    UPDATE job_counts SET n = n - 1 WHERE job_id = OLD.job_id AND state = OLD.state;
    UPDATE job_counts SET n = n + 1 WHERE job_id = NEW.job_id AND state = NEW.state;
END;
CREATE TRIGGER job_executions_uncounted AFTER DELETE ON job_executions BEGIN
    UPDATE job_counts SET n = n - 1 WHERE job_id = OLD.job_id AND state = OLD.state;
END;

-- A device deleted (to the trash, or with its project): its unfinished executions are
-- REMOVED, remembering what they were.
CREATE TRIGGER devices_jobs_removed AFTER DELETE ON devices BEGIN
    UPDATE job_executions
       SET removed_from = state, state = 'REMOVED', version = version + 1,
           last_updated_date = strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'
     WHERE device_id = OLD.id AND state IN ('QUEUED', 'IN_PROGRESS');
END;
-- A device (re)inserted: restored from the trash, its REMOVED executions of jobs still
-- running are what they were; new or restored, it joins the continuous jobs it matches.
CREATE TRIGGER devices_jobs_restored AFTER INSERT ON devices BEGIN
    UPDATE job_executions
       SET state = removed_from, removed_from = NULL, version = version + 1,
           last_updated_date = strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'
     WHERE device_id = NEW.id AND state = 'REMOVED' AND removed_from IS NOT NULL
       AND job_id IN (SELECT id FROM jobs WHERE state IN ('SCHEDULED', 'IN_PROGRESS'));
    INSERT OR IGNORE INTO job_executions
        (job_id, device_id, org_id, state, queued_date, ready_date, last_updated_date)
    SELECT j.id, NEW.id, NEW.org_id, 'QUEUED', t.now, t.now, t.now
      FROM jobs j, (SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z' AS now) t
     WHERE j.state IN ('SCHEDULED', 'IN_PROGRESS') AND j.continuous = 1
       AND j.org_id = NEW.org_id
       AND (j.target_project_id = NEW.project_id
            OR ((j.project_id IS NULL OR j.project_id = NEW.project_id)
                AND EXISTS (SELECT 1 FROM json_each(j.target_tags) a, json_each(NEW.tags) b
                             WHERE a.value = b.value)));
END;
CREATE TRIGGER devices_jobs_joined AFTER UPDATE OF tags, project_id ON devices BEGIN
    INSERT OR IGNORE INTO job_executions
        (job_id, device_id, org_id, state, queued_date, ready_date, last_updated_date)
    SELECT j.id, NEW.id, NEW.org_id, 'QUEUED', t.now, t.now, t.now
      FROM jobs j, (SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z' AS now) t
     WHERE j.state IN ('SCHEDULED', 'IN_PROGRESS') AND j.continuous = 1
       AND j.org_id = NEW.org_id
       AND (j.target_project_id = NEW.project_id
            OR ((j.project_id IS NULL OR j.project_id = NEW.project_id)
                AND EXISTS (SELECT 1 FROM json_each(j.target_tags) a, json_each(NEW.tags) b
                             WHERE a.value = b.value)));
END;
-- A device that becomes a member of a group gets the group's continuous jobs.
CREATE TRIGGER access_jobs_joined AFTER INSERT ON access
WHEN NEW.kind = 'group' AND NEW.grantee_kind = 'device' BEGIN
    INSERT OR IGNORE INTO job_executions
        (job_id, device_id, org_id, state, queued_date, ready_date, last_updated_date)
    SELECT j.id, NEW.grantee_id, NEW.org_id, 'QUEUED', t.now, t.now, t.now
      FROM jobs j, (SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z' AS now) t
     WHERE j.state IN ('SCHEDULED', 'IN_PROGRESS') AND j.continuous = 1
       AND j.target_group_id = NEW.target_id
       AND EXISTS (SELECT 1 FROM devices d WHERE d.id = NEW.grantee_id);
END;
