-- 0030: a continuous job stays inside its scope (docs/jobs.md, "Who may").
--
-- The triggers of 0027 added a joining device to every continuous job it matched: a job
-- filed in a project took the group members of other projects, and no job stopped at the
-- most devices a job may target. Here a joining device is added only when it is in the
-- job's project (when the job has one) and while the job has fewer executions than its
-- `target_limit` (jobs_max_targets when it was made; the jobs made before this migration
-- take the default, 10,000). A device that is itself an admin (of the org, or of a
-- project, directly or through a role) joins only the jobs an org admin made
-- (`reaches_admins`): no one else may update it, and a continuous job must not reach
-- further than its maker (the jobs made before this migration do not reach admins).
--
-- The scheduler's round-robin cursor (edge/jobs/scheduler.py) is kept here too, so a tick
-- visits a bounded batch of running jobs and the next tick the batch after it, across
-- restarts; and the running jobs of one org are counted by an index (jobs_max_running).
ALTER TABLE jobs ADD COLUMN target_limit INTEGER;
ALTER TABLE jobs ADD COLUMN reaches_admins INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET target_limit = 10000;
CREATE INDEX jobs_running_by_org ON jobs (org_id, id) WHERE state IN ('SCHEDULED', 'IN_PROGRESS');
CREATE INDEX jobs_running_by_id ON jobs (id) WHERE state IN ('SCHEDULED', 'IN_PROGRESS');

CREATE TABLE job_scheduler (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    cursor TEXT NOT NULL   -- the last job ID the scheduler visited ('' before the first)
) STRICT;
INSERT INTO job_scheduler (id, cursor) VALUES (1, '');

-- The continuous jobs a device joins: running, of its org, in its project when the job
-- has one, with room under the job's limit. `job_counts` holds one row per state, so the
-- sum is eight rows, however many executions the job has.
CREATE VIEW continuous_jobs AS
SELECT j.id, j.org_id, j.project_id, j.target_group_id, j.target_project_id, j.target_tags,
       j.reaches_admins
  FROM jobs j
 WHERE j.state IN ('SCHEDULED', 'IN_PROGRESS') AND j.continuous = 1
   AND (j.target_limit IS NULL
        OR (SELECT sum(n) FROM job_counts c WHERE c.job_id = j.id) < j.target_limit);

-- The accounts that are admins of the org or of a project, directly or by an active role.
CREATE VIEW admin_accounts AS
SELECT a.grantee_id AS id FROM access a
 WHERE a.is_admin = 1 AND a.is_active = 1 AND a.kind IN ('org', 'project')
UNION ALL
SELECT ra.grantee_id FROM access ra
  JOIN roles r ON r.id = ra.target_id AND r.is_active = 1
  JOIN access a ON a.grantee_id = r.id AND a.is_admin = 1 AND a.is_active = 1
                AND a.kind IN ('org', 'project')
 WHERE ra.kind = 'role' AND ra.is_active = 1;

DROP TRIGGER devices_jobs_restored;
CREATE TRIGGER devices_jobs_restored AFTER INSERT ON devices BEGIN
    UPDATE job_executions
       SET state = removed_from, removed_from = NULL, version = version + 1,
           last_updated_date = strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'
     WHERE device_id = NEW.id AND state = 'REMOVED' AND removed_from IS NOT NULL
       AND job_id IN (SELECT id FROM jobs WHERE state IN ('SCHEDULED', 'IN_PROGRESS'));
    INSERT OR IGNORE INTO job_executions
        (job_id, device_id, org_id, state, queued_date, ready_date, last_updated_date)
    SELECT j.id, NEW.id, NEW.org_id, 'QUEUED', t.now, t.now, t.now
      FROM continuous_jobs j, (SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z' AS now) t
     WHERE j.org_id = NEW.org_id
       AND (j.project_id IS NULL OR j.project_id IS NEW.project_id)
       AND (j.reaches_admins = 1 OR NOT EXISTS (SELECT 1 FROM admin_accounts v WHERE v.id = NEW.id))
       AND (j.target_project_id = NEW.project_id
            OR EXISTS (SELECT 1 FROM json_each(j.target_tags) a, json_each(NEW.tags) b
                        WHERE a.value = b.value));
END;

DROP TRIGGER devices_jobs_joined;
CREATE TRIGGER devices_jobs_joined AFTER UPDATE OF tags, project_id ON devices BEGIN
    INSERT OR IGNORE INTO job_executions
        (job_id, device_id, org_id, state, queued_date, ready_date, last_updated_date)
    SELECT j.id, NEW.id, NEW.org_id, 'QUEUED', t.now, t.now, t.now
      FROM continuous_jobs j, (SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z' AS now) t
     WHERE j.org_id = NEW.org_id
       AND (j.project_id IS NULL OR j.project_id IS NEW.project_id)
       AND (j.reaches_admins = 1 OR NOT EXISTS (SELECT 1 FROM admin_accounts v WHERE v.id = NEW.id))
       AND (j.target_project_id = NEW.project_id
            OR EXISTS (SELECT 1 FROM json_each(j.target_tags) a, json_each(NEW.tags) b
                        WHERE a.value = b.value));
END;

DROP TRIGGER access_jobs_joined;
CREATE TRIGGER access_jobs_joined AFTER INSERT ON access
WHEN NEW.kind = 'group' AND NEW.grantee_kind = 'device' BEGIN
    INSERT OR IGNORE INTO job_executions
        (job_id, device_id, org_id, state, queued_date, ready_date, last_updated_date)
    SELECT j.id, d.id, d.org_id, 'QUEUED', t.now, t.now, t.now
      FROM continuous_jobs j, devices d,
           (SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z' AS now) t
     WHERE j.target_group_id = NEW.target_id AND d.id = NEW.grantee_id
       AND d.org_id = j.org_id
       AND (j.project_id IS NULL OR j.project_id IS d.project_id)
       AND (j.reaches_admins = 1 OR NOT EXISTS (SELECT 1 FROM admin_accounts v WHERE v.id = d.id));
END;
