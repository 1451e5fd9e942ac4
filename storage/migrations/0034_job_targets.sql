-- 0031: what a job was asked to target lives in its own row, out of the job's.
--
-- A job that names its devices keeps up to jobs_max_targets IDs (10,000 by default, some
-- 250 KB of JSON) in `targets`. In the jobs row, every write of the row (the scheduler
-- moves the job's rate window each time it releases an execution) rewrote those overflow
-- pages, and every read of a column after them walked their chain: a tick that released
-- one execution cost more for a job over 10,000 IDs than over 10. Here the list is in
-- `job_targets`, read only by what shows the job (GET, lists) and written once, when the
-- job is made; the jobs row is small whatever the job targets.
CREATE TABLE job_targets (
    job_id  TEXT PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    targets TEXT NOT NULL CHECK (json_valid(targets))
) STRICT;
INSERT INTO job_targets (job_id, targets) SELECT id, targets FROM jobs;
ALTER TABLE jobs DROP COLUMN targets;
