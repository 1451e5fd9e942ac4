-- 0033: the CRL lists every ended device certificate until it expires, even once its
-- registry row is gone: a device deleted (its rows move to the trash), erased, or taken
-- with its project or organization (a cascade) took its certificates off the CRL while
-- they were still valid, for tools that check certificates with the CRL alone. Each row
-- leaving `device_certificates` is copied here first, by a trigger (so every writer, and
-- every cascade, counts), ended if it was not: `revoked`, `cessation_of_operation`.
-- A row that comes back (a device restored from the trash, still revoked) is taken out
-- again: the registry lists it once more. Rows past their expiry are pruned as others go.
CREATE TABLE ended_certificates (
    serial       TEXT PRIMARY KEY,
    device_id    TEXT NOT NULL,
    issued_date  TEXT NOT NULL,
    not_after    TEXT NOT NULL,
    revoked_date TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    not_before   TEXT NOT NULL,
    status       TEXT NOT NULL,
    reason       TEXT NOT NULL
) STRICT;
CREATE INDEX ended_certificates_by_expiry ON ended_certificates (not_after);

CREATE TRIGGER certificate_kept_for_the_crl BEFORE DELETE ON device_certificates BEGIN
    DELETE FROM ended_certificates
    WHERE not_after <= coalesce(old.revoked_date, old.issued_date);
    INSERT OR REPLACE INTO ended_certificates
    VALUES (
        old.serial, old.device_id, old.issued_date, old.not_after,
        coalesce(old.revoked_date, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
        old.fingerprint, old.not_before,
        CASE WHEN old.status = 'active' THEN 'revoked' ELSE old.status END,
        coalesce(old.reason, 'cessation_of_operation')
    );
END;

CREATE TRIGGER certificate_back_in_the_registry AFTER INSERT ON device_certificates BEGIN
    DELETE FROM ended_certificates WHERE serial = new.serial;
END;
