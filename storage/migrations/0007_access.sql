-- 0007: the access core. Indexes that let permission checks and list pages read only
-- what concerns them; the access epoch that tells every process when cached permission
-- answers went stale; the trash, where deleted users, groups, roles and projects wait to
-- be restored or erased.

-- List pages in the default order (created_date, id) across a whole organization, and by
-- name; the per-project indexes of 0003 serve project-scoped pages.
CREATE INDEX groups_by_org_created ON groups (org_id, created_date, id);
CREATE INDEX groups_by_org_name ON groups (org_id, name_folded, id);
CREATE INDEX roles_by_org_created ON roles (org_id, created_date, id);
CREATE INDEX roles_by_org_name ON roles (org_id, name_folded, id);
CREATE INDEX users_by_org_created ON users (org_id, created_date, id);
CREATE INDEX users_by_org_username ON users (org_id, username_folded, id);
CREATE INDEX projects_by_org_name ON projects (org_id, name_folded, id);

-- What an account holds, page by page in the default order; and the few admin grants,
-- found without reading the rest.
DROP INDEX access_by_grantee;
CREATE INDEX access_by_grantee ON access (grantee_id, kind, created_date, id);
CREATE INDEX access_admin_by_grantee ON access (grantee_id, kind) WHERE is_admin = 1;

-- Bumped by triggers whenever a cached permission answer may have gone stale: an access
-- object written, a role, group or project suspended, moved or deleted. Every process reads
-- it before using its cache (edge/access/cache.py), so a change made anywhere counts at once.
CREATE TABLE access_epoch (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
) STRICT;
INSERT INTO access_epoch (id, value) VALUES (1, 0);

CREATE TRIGGER access_epoch_access_inserted AFTER INSERT ON access BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_access_updated AFTER UPDATE ON access BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_access_deleted AFTER DELETE ON access BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_role_changed AFTER UPDATE OF is_active, project_id ON roles
WHEN new.is_active IS NOT old.is_active OR new.project_id IS NOT old.project_id BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_role_deleted AFTER DELETE ON roles BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_group_changed AFTER UPDATE OF is_active, project_id ON groups
WHEN new.is_active IS NOT old.is_active OR new.project_id IS NOT old.project_id BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_group_deleted AFTER DELETE ON groups BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_project_changed AFTER UPDATE OF is_active ON projects
WHEN new.is_active IS NOT old.is_active BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER access_epoch_project_deleted AFTER DELETE ON projects BEGIN
    UPDATE access_epoch SET value = value + 1 WHERE id = 1;
END;

-- Deleted records (a delete without permanent=true). The record and the rows that belong
-- to it (its access objects both ways, picture, dashboard, MFA factors; for a project,
-- everything in it) leave their tables, so no lookup, list or permission check can see
-- them and their unique names are free; `payload` keeps those rows to restore them.
-- A sweep erases entries once `purge_after` has passed.
CREATE TABLE trash (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    project_id   TEXT,
    name         TEXT NOT NULL,
    deleted_date TEXT NOT NULL,
    deleted_by   TEXT,
    purge_after  TEXT NOT NULL,
    payload      TEXT NOT NULL CHECK (json_valid(payload))
) STRICT;
CREATE INDEX trash_by_org ON trash (org_id, deleted_date, id);
CREATE INDEX trash_by_purge ON trash (purge_after);
