-- 0002: the durable outbox. Mail and SMS are queued here inside the transaction that causes
-- them, and a background task delivers them with retries; nothing is lost on a crash.

CREATE TABLE outbox (
    id              TEXT PRIMARY KEY,
    channel         TEXT NOT NULL CHECK (channel IN ('mail', 'sms')),
    purpose         TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    subject         TEXT NOT NULL DEFAULT '',
    body_text       TEXT NOT NULL,
    body_html       TEXT,
    org_id          TEXT REFERENCES orgs (id) ON DELETE CASCADE,
    status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error      TEXT,
    created_date    TEXT NOT NULL,
    sent_date       TEXT
) STRICT;
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
