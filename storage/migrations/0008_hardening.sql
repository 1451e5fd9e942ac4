-- 0008: hardening (#9).

-- TOTP codes work once: the time step of the last code accepted for a software factor.
-- A code is accepted only for a later step, so a code seen over someone's shoulder (or
-- replayed from a captured request) cannot sign in a second time within its window.
ALTER TABLE mfa_factors ADD COLUMN last_totp_step INTEGER;

-- Account-wide sign-in lockouts: failures from many addresses against one account (a
-- distributed guess). Blocks by (account, address) pair stay in sign_in_failures; this
-- table keeps a record of each account-wide lockout for the operator (`edge check`).
CREATE TABLE sign_in_lockouts (
    id            INTEGER PRIMARY KEY,
    account       TEXT NOT NULL,
    failures      INTEGER NOT NULL,
    addresses     INTEGER NOT NULL,
    blocked_until TEXT NOT NULL,
    created_date  TEXT NOT NULL
) STRICT;
CREATE INDEX sign_in_lockouts_by_date ON sign_in_lockouts (created_date);
