-- 0020: who published each retained MQTT message (the device's or user's ID), so that the
-- broker can hold each account to mqtt_account_retained_bytes across restarts. Messages
-- retained before this migration have no owner and count against no account until they
-- are replaced or cleared.
ALTER TABLE mqtt_retained ADD COLUMN account_id TEXT;
