-- 0016: a user's `last_seen` is the newest of their sessions' `created_date`. With the
-- index on account_id alone, SQLite read every session row of the account to find it
-- (a cost that grew with each sign-in); this index answers max() from one index entry.
DROP INDEX sessions_by_account;
CREATE INDEX sessions_by_account ON sessions (account_id, created_date);
