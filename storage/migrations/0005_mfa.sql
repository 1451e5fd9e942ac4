-- 0005: MFA secrets, recovery codes, challenges, SMS codes, sign-in throttling.

-- One row per MFA kind a user has (or is setting up). TOTP secrets are Fernet-encrypted
-- (they cannot be hashed); recovery codes and SMS codes are stored as SHA-256 only.
CREATE TABLE mfa_factors (
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('software', 'sms')),
    secret_enc     TEXT,
    pending_enc    TEXT,
    recovery_hash  TEXT,
    code_hash      TEXT,
    code_expires_at TEXT,
    created_date   TEXT NOT NULL,
    PRIMARY KEY (user_id, kind)
) STRICT;

-- A sign-in step in progress: the client holds the session, we keep only its hash.
CREATE TABLE challenges (
    session_hash TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    project_id   TEXT,
    code_hash    TEXT,
    expires_at   TEXT NOT NULL,
    used         INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX challenges_by_expiry ON challenges (expires_at);

-- Failed sign-in attempts per account and per client address, shared by every process.
CREATE TABLE sign_in_failures (
    key           TEXT PRIMARY KEY,
    failures      INTEGER NOT NULL,
    blocked_until TEXT NOT NULL,
    updated_date  TEXT NOT NULL
) STRICT;
