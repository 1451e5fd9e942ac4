-- 0009: devices. The device registry (an account like a user: it holds access objects and
-- roles, and signs in with an API key), its client certificates, and when each was last
-- seen (kept apart: it changes every few seconds and must not rewrite the device row).

CREATE TABLE devices (
    id                            TEXT PRIMARY KEY,
    org_id                        TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    project_id                    TEXT REFERENCES projects (id) ON DELETE CASCADE,
    name                          TEXT NOT NULL,
    name_folded                   TEXT NOT NULL,
    owner_id                      TEXT,
    manufacturer                  TEXT,
    product                       TEXT,
    site                          TEXT,
    serial_number                 TEXT,
    mac_address                   TEXT,
    locale                        TEXT NOT NULL DEFAULT 'en-US',
    zoneinfo                      TEXT NOT NULL DEFAULT 'UTC',
    picture                       TEXT,
    tags                          TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    custom_attributes             TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(custom_attributes)),
    restricted_custom_attributes  TEXT NOT NULL DEFAULT '{}'
                                  CHECK (json_valid(restricted_custom_attributes)),
    iot_scopes                    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(iot_scopes)),
    is_active                     INTEGER NOT NULL DEFAULT 1,
    is_delete_protected           INTEGER NOT NULL DEFAULT 0,
    -- SHA-256 of the API key (256 random bits: a slow hash adds nothing); NULL: no key works
    -- (the device was deleted; restoring it does not bring its old key back).
    api_key_hash                  TEXT,
    api_key_last_changed          TEXT NOT NULL,
    mqtt_credentials_last_changed TEXT NOT NULL,
    created_date                  TEXT NOT NULL,
    created_by                    TEXT,
    last_updated_date             TEXT NOT NULL,
    last_updated_by               TEXT
) STRICT;
-- Names are unique in an organization without regard to case, like usernames.
CREATE UNIQUE INDEX devices_unique_name ON devices (org_id, name_folded);
CREATE UNIQUE INDEX devices_by_key ON devices (api_key_hash);
-- List pages in the default order and by name; a project's devices; an owner's devices.
CREATE INDEX devices_by_org_created ON devices (org_id, created_date, id);
CREATE INDEX devices_by_org_name ON devices (org_id, name_folded, id);
CREATE INDEX devices_by_project ON devices (org_id, project_id, created_date, id);
CREATE INDEX devices_by_owner ON devices (owner_id);

-- Every client certificate issued to a device, by serial (lowercase hex). The broker
-- refuses a certificate whose serial is unknown here or revoked, whatever its signature.
CREATE TABLE device_certificates (
    serial       TEXT PRIMARY KEY,
    device_id    TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    issued_date  TEXT NOT NULL,
    not_after    TEXT NOT NULL,
    revoked_date TEXT
) STRICT;
CREATE INDEX device_certificates_by_device ON device_certificates (device_id);

-- When each device was last seen over HTTP or MQTT, written in batches every few seconds.
CREATE TABLE device_seen (
    device_id TEXT PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
    last_seen TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Whatever is deleted takes its access objects with it, both ways (as users do).
CREATE TRIGGER devices_drop_access AFTER DELETE ON devices BEGIN
    DELETE FROM access WHERE grantee_id = old.id OR target_id = old.id;
END;

-- Cached device principals (the API-key fast path) and live MQTT connections depend on
-- the key, the certificates, the state, the scopes and the place of a device.
CREATE TRIGGER auth_epoch_device_changed
AFTER UPDATE OF is_active, api_key_hash, iot_scopes, org_id, project_id ON devices
WHEN new.is_active IS NOT old.is_active OR new.api_key_hash IS NOT old.api_key_hash
    OR new.iot_scopes IS NOT old.iot_scopes OR new.org_id IS NOT old.org_id
    OR new.project_id IS NOT old.project_id BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_epoch_device_deleted AFTER DELETE ON devices BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_epoch_certificate_revoked AFTER UPDATE OF revoked_date ON device_certificates
WHEN new.revoked_date IS NOT old.revoked_date BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_epoch_certificate_deleted AFTER DELETE ON device_certificates BEGIN
    UPDATE auth_epoch SET value = value + 1 WHERE id = 1;
END;

-- Permission answers about a device follow its project (project-level device permissions).
CREATE TRIGGER access_epoch_device_moved AFTER UPDATE OF project_id, org_id ON devices
WHEN new.project_id IS NOT old.project_id OR new.org_id IS NOT old.org_id BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_device_deleted AFTER DELETE ON devices BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;

-- Full-text search over the descriptive fields.
CREATE VIRTUAL TABLE devices_fts USING fts5 (
    id UNINDEXED, name, manufacturer, product, site, serial_number, mac_address, tags,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER devices_fts_insert AFTER INSERT ON devices BEGIN
    INSERT INTO devices_fts (rowid, id, name, manufacturer, product, site, serial_number, mac_address, tags) VALUES (new.rowid, new.id, new.name, coalesce(new.manufacturer, ''), coalesce(new.product, ''), coalesce(new.site, ''), coalesce(new.serial_number, ''), coalesce(new.mac_address, ''), (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER devices_fts_update
AFTER UPDATE OF name, manufacturer, product, site, serial_number, mac_address, tags ON devices BEGIN
    DELETE FROM devices_fts WHERE rowid = old.rowid;
    INSERT INTO devices_fts (rowid, id, name, manufacturer, product, site, serial_number, mac_address, tags) VALUES (new.rowid, new.id, new.name, coalesce(new.manufacturer, ''), coalesce(new.product, ''), coalesce(new.site, ''), coalesce(new.serial_number, ''), coalesce(new.mac_address, ''), (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)));
END;
CREATE TRIGGER devices_fts_delete AFTER DELETE ON devices BEGIN
    DELETE FROM devices_fts WHERE rowid = old.rowid;
END;
