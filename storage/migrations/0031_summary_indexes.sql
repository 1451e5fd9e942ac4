-- 0031: an org admin's overview (GET /v2/summary, storage/summary.py) counts the org's
-- files, their bytes and its open tunnels. Neither table had an index that starts with
-- org_id, so each count scanned every organization's rows: one org's summary slowed down
-- with another's files. Files by org with their size (covering: count and sum read the
-- index alone); tunnels by org, open ones (closed_date NULL) before the expiry test.
CREATE INDEX files_by_org ON files (org_id, size);
CREATE INDEX tunnels_by_org_open ON tunnels (org_id, closed_date, expires_date);
