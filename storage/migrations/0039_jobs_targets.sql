-- 0039: only active group access is membership for a continuous job, and a job whose
-- maker was not an org admin never reaches an org-admin device (docs/jobs.md, "Who may").
--
-- 0030's `access_jobs_joined` added a device to a group's continuous jobs on any access
-- row, an inactive one too (which grants nothing, docs/groups-and-roles.md: a device's
-- access comes back from the trash as it was), and access turned on later never joined.
-- Here only active access joins, on insert or when it is turned on.
--
-- A device's access rows can come after its own row (a device made an admin when it is
-- created, one restored from the trash: storage/trash.py puts `devices` back before
-- `access`), so `devices_jobs_restored` found no admin and the device joined continuous
-- jobs that do not reach admins (`reaches_admins = 0`). `access_jobs_admin` applies the
-- join's rule when the admin access comes: the device's executions of those jobs not
-- yet released end REMOVED, status_details.reason `device_is_admin` (of a snapshot job,
-- only for org admin access: a project's admins may update its admin devices, and a
-- snapshot's targets were asked when it was made). An org admin is out of every such
-- job's reach, whoever holds the access (a role too): the scheduler asks
-- `org_admin_accounts` at release (storage/jobs.py `waiting`, edge/jobs/scheduler.py).
CREATE VIEW org_admin_accounts AS
SELECT a.grantee_id AS id FROM access a
 WHERE a.is_admin = 1 AND a.is_active = 1 AND a.kind = 'org'
UNION ALL
SELECT ra.grantee_id FROM access ra
  JOIN roles r ON r.id = ra.target_id AND r.is_active = 1
  JOIN access a ON a.grantee_id = r.id AND a.is_admin = 1 AND a.is_active = 1
                AND a.kind = 'org'
 WHERE ra.kind = 'role' AND ra.is_active = 1;

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

CREATE TRIGGER access_jobs_admin AFTER INSERT ON access
WHEN NEW.grantee_kind = 'device' AND NEW.kind IN ('org', 'project') AND NEW.is_admin = 1
 AND NEW.is_active = 1 BEGIN
    UPDATE job_executions
       SET state = 'REMOVED', status_details = '{"reason":"device_is_admin"}',
           version = version + 1,
           finished_date = strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z',
           last_updated_date = strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'
     WHERE device_id = NEW.grantee_id AND state = 'QUEUED' AND released = 0
       AND job_id IN (SELECT id FROM jobs WHERE reaches_admins = 0
                       AND state IN ('SCHEDULED', 'IN_PROGRESS')
                       AND (continuous = 1 OR NEW.kind = 'org'));
END;
