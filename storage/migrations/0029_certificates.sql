-- 0029: device certificates over their life (docs/provisioning.md). The registry keeps,
-- beside each serial, the certificate's SHA-256 fingerprint (of its DER), its validity
-- window, and its status: `active` (in force), `superseded` (a reset or a renewal issued
-- the next one) or `revoked` (an admin revoked it, or its device was deleted), with the
-- reason. `revoked_date` stays the moment either ended it: the auth epoch's triggers
-- (0009) watch it, so a live connection on an ended certificate is checked again.
-- Certificates ended before this migration were ended by a reset or a delete; they are
-- marked superseded (a reset) unless their device is gone or has no key (a delete).
ALTER TABLE device_certificates ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE device_certificates ADD COLUMN not_before TEXT NOT NULL DEFAULT '';
ALTER TABLE device_certificates ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
ALTER TABLE device_certificates ADD COLUMN reason TEXT;

UPDATE device_certificates SET not_before = issued_date;
UPDATE device_certificates SET status = 'superseded', reason = 'superseded'
WHERE revoked_date IS NOT NULL;
UPDATE device_certificates SET status = 'revoked', reason = 'cessation_of_operation'
WHERE revoked_date IS NOT NULL
  AND device_id IN (SELECT id FROM devices WHERE api_key_hash IS NULL);

-- Certificates in force by expiry (edge check, /metrics), and ended ones for the CRL.
CREATE INDEX device_certificates_by_status ON device_certificates (status, not_after);
