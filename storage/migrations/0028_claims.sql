-- Provisioning claims (docs/provisioning.md): a device that presents a claim's ID and
-- secret with a certificate signing request enrolls itself, and gets the claim's template.
-- The secret is kept as its SHA-256 only, as API keys are. `template` holds what the new
-- device gets: {"groups": {group_id: group access values}, "tags": [...], "iot_scopes": {}}.
CREATE TABLE provisioning_claims (
    id             TEXT PRIMARY KEY,
    org_id         TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    project_id     TEXT REFERENCES projects (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    secret_hash    TEXT NOT NULL,
    template       TEXT NOT NULL DEFAULT '{}',
    max_uses       INTEGER NOT NULL CHECK (max_uses >= 1),
    uses           INTEGER NOT NULL DEFAULT 0,
    expires_date   TEXT NOT NULL,
    last_used_date TEXT,
    revoked_date   TEXT,
    revoked_by     TEXT,
    created_date   TEXT NOT NULL,
    created_by     TEXT,
    CHECK (uses <= max_uses)
) STRICT;
CREATE INDEX provisioning_claims_by_org ON provisioning_claims (org_id, created_date);
CREATE INDEX provisioning_claims_by_project ON provisioning_claims (project_id);
