-- 0006: password reset tokens, and the auth epoch that tells every process when to drop
-- its verified-principal cache.

-- A reset token is 256 random bits shown once (in the recovery mail) and stored only as its
-- SHA-256; redeeming it deletes the row, so it works once. Expired rows are swept.
CREATE TABLE reset_tokens (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    created_date TEXT NOT NULL,
    expires_at   TEXT NOT NULL
) STRICT;
CREATE INDEX reset_tokens_by_user ON reset_tokens (user_id);
CREATE INDEX reset_tokens_by_expiry ON reset_tokens (expires_at);

-- One counter, bumped by triggers whenever something that a cached principal depends on
-- changes: a session revoked or deleted, a user suspended, deleted or given a new password,
-- a staff account deleted. Whoever writes it (this process, another worker, an operator
-- with the sqlite3 shell), every process sees the new value and clears its cache.
CREATE TABLE auth_epoch (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
) STRICT;
INSERT INTO auth_epoch (id, value) VALUES (1, 0);

CREATE TRIGGER auth_epoch_session_revoked AFTER UPDATE OF revoked ON sessions
WHEN new.revoked != old.revoked BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_epoch_session_deleted AFTER DELETE ON sessions BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_epoch_user_changed AFTER UPDATE OF is_active, password_hash, org_id ON users
WHEN new.is_active IS NOT old.is_active OR new.password_hash IS NOT old.password_hash
    OR new.org_id IS NOT old.org_id BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_epoch_user_deleted AFTER DELETE ON users BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_epoch_staff_deleted AFTER DELETE ON staff BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;
