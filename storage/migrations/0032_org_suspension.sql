-- 0032: suspending an organization ends its users' sessions at once, whoever suspends it
-- (the API, another process, an operator with the sqlite3 shell). Revoking them moves the
-- auth epoch (0006), so every process drops the principals it cached, and the broker checks
-- its user tools' connections again. Staff sessions scoped to the org stay: staff lift
-- suspensions. Reactivating revives no session: its users sign in again.
CREATE TRIGGER org_suspended_ends_sessions AFTER UPDATE OF is_active ON orgs
WHEN old.is_active != 0 AND new.is_active = 0 BEGIN
    UPDATE sessions SET revoked = 1
    WHERE org_id = new.id AND account_kind != 'staff' AND revoked = 0;
END;
