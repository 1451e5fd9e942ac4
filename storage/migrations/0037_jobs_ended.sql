-- 0037: the ended jobs by the date they ended, for the hourly retention sweep
-- (jobs_retention_days, docs/jobs.md "Retention"), which deletes the oldest first in
-- batches and must find them without reading the running jobs or the rest of the table.
CREATE INDEX jobs_ended ON jobs (completed_date)
    WHERE state IN ('COMPLETED', 'CANCELED', 'ABORTED');
