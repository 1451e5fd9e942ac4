-- The audit log shows names beside IDs (docs/audit.md): the actor's and the target's name as
-- they were when the event was written, so the log still reads after a rename or a deletion.
-- Events written before this migration have none (NULL: the API and the CLI leave them out).
ALTER TABLE audit_events ADD COLUMN actor_name TEXT;
ALTER TABLE audit_events ADD COLUMN target_name TEXT;
