-- 0018: the users epoch, which tells every process when what it keeps about a user may be
-- stale: the user's row, their picture, or their sessions (a user's `last_seen` is the
-- newest session's `created_date`). Bumped by triggers, like the auth and access epochs
-- (0006, 0007), so a change made by any process or with the sqlite3 shell counts from the
-- next read on. What a user holds is the access epoch's: this one leaves it alone.
CREATE TABLE users_epoch (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
) STRICT;
INSERT INTO users_epoch (id, value) VALUES (1, 0);

CREATE TRIGGER users_epoch_user_inserted AFTER INSERT ON users BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER users_epoch_user_updated AFTER UPDATE ON users BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER users_epoch_user_deleted AFTER DELETE ON users BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER users_epoch_picture_inserted AFTER INSERT ON pictures BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER users_epoch_picture_updated AFTER UPDATE ON pictures BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER users_epoch_picture_deleted AFTER DELETE ON pictures BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER users_epoch_session_inserted AFTER INSERT ON sessions BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER users_epoch_session_moved AFTER UPDATE OF account_id, created_date ON sessions
WHEN new.account_id IS NOT old.account_id OR new.created_date IS NOT old.created_date BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER users_epoch_session_deleted AFTER DELETE ON sessions BEGIN
    UPDATE users_epoch SET value = value + 1 WHERE id = 1;
END;
