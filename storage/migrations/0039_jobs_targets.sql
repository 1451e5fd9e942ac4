-- 0039: only active group access is membership for a continuous job (docs/jobs.md).
--
-- 0030's `access_jobs_joined` added a device to a group's continuous jobs on any access
-- row, an inactive one too (which grants nothing, docs/groups-and-roles.md: a device's
-- access comes back from the trash as it was), and access turned on later never joined.
-- Here only active access joins, on insert or when it is turned on.

-- The group members a running continuous job over their group may take (0030's rule: in
-- the job's project when it has one, under its limit, an admin only for a job that
-- reaches admins), for the two triggers below to ask of one access row.
CREATE VIEW group_jobs_joinable AS
SELECT j.id AS job_id, j.target_group_id AS group_id, d.id AS device_id, d.org_id
  FROM continuous_jobs j JOIN devices d ON d.org_id = j.org_id
 WHERE j.target_group_id IS NOT NULL
   AND (j.project_id IS NULL OR j.project_id IS d.project_id)
   AND (j.reaches_admins = 1 OR NOT EXISTS (SELECT 1 FROM admin_accounts v WHERE v.id = d.id));

DROP TRIGGER access_jobs_joined;
CREATE TRIGGER access_jobs_joined AFTER INSERT ON access
WHEN NEW.kind = 'group' AND NEW.grantee_kind = 'device' AND NEW.is_active = 1 BEGIN
    INSERT OR IGNORE INTO job_executions
        (job_id, device_id, org_id, state, queued_date, ready_date, last_updated_date)
    SELECT g.job_id, g.device_id, g.org_id, 'QUEUED', t.now, t.now, t.now
      FROM group_jobs_joinable g, (SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z' AS now) t
     WHERE g.group_id = NEW.target_id AND g.device_id = NEW.grantee_id;
END;

CREATE TRIGGER access_jobs_activated AFTER UPDATE OF is_active ON access
WHEN NEW.kind = 'group' AND NEW.grantee_kind = 'device' AND NEW.is_active = 1
 AND OLD.is_active = 0 BEGIN
    INSERT OR IGNORE INTO job_executions
        (job_id, device_id, org_id, state, queued_date, ready_date, last_updated_date)
    SELECT g.job_id, g.device_id, g.org_id, 'QUEUED', t.now, t.now, t.now
      FROM group_jobs_joinable g, (SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z' AS now) t
     WHERE g.group_id = NEW.target_id AND g.device_id = NEW.grantee_id;
END;
