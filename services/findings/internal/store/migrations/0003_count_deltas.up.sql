-- Counters without conflicting row locks.
--
-- finding_counts held one row per (organization, scan, severity, state),
-- updated in place by row triggers. Two transactions that change findings of
-- one organization then lock the same few counter rows, each in the order of
-- its own rows, and deadlock when the orders differ (two scans of one
-- organization reporting together did).
--
-- finding_counts now holds deltas: a change appends rows and never updates
-- one, so no two writers ever wait for each other on a counter. A total is
-- the sum of a key's rows, exact in every snapshot. A delta is pending until
-- FoldCounts, in the background, replaces all rows of its key by one row
-- holding their sum, in one statement, so that a key keeps few rows.
ALTER TABLE finding_counts DROP CONSTRAINT finding_counts_pkey;
ALTER TABLE finding_counts ADD COLUMN pending boolean NOT NULL DEFAULT false;
ALTER TABLE finding_counts ALTER COLUMN pending SET DEFAULT true;
CREATE INDEX finding_counts_key_idx ON finding_counts (org_id, scan_id, severity, state) INCLUDE (n);
CREATE INDEX finding_counts_pending_idx ON finding_counts (org_id, scan_id, severity, state) WHERE pending;

-- The counting triggers run once per statement over its transition tables
-- and append one delta row per key the statement changed, instead of one
-- upsert per finding and occurrence.
DROP TRIGGER findings_count ON findings;
DROP TRIGGER occurrences_count ON occurrences;
DROP FUNCTION findings_count_trigger();
DROP FUNCTION occurrences_count_trigger();
DROP FUNCTION bump_count(uuid, uuid, text, text, bigint);

-- New findings count for the organization; their scans count them when
-- their occurrences are inserted.
CREATE FUNCTION findings_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n)
        SELECT org_id, '00000000-0000-0000-0000-000000000000'::uuid, severity, state, count(*)
        FROM new_rows WHERE verification_status = 'approved' GROUP BY org_id, severity, state;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_count_insert AFTER INSERT ON findings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION findings_count_insert();

-- A finding whose severity, state or approval changed leaves its old key
-- and joins its new one, for the organization and for every scan that saw
-- it. Keys whose deltas cancel out get no row.
CREATE FUNCTION findings_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH changed AS (
        SELECT o.id, o.org_id, o.severity AS old_sev, o.state AS old_state, o.verification_status = 'approved' AS old_on,
               n.severity AS new_sev, n.state AS new_state, n.verification_status = 'approved' AS new_on
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.severity, o.state, o.verification_status) IS DISTINCT FROM (n.severity, n.state, n.verification_status)
    ), scans AS (
        SELECT c.*, '00000000-0000-0000-0000-000000000000'::uuid AS scan_id FROM changed c
        UNION ALL
        SELECT c.*, oc.scan_id FROM changed c JOIN findings.occurrences oc ON oc.finding_id = c.id
    ), deltas AS (
        SELECT org_id, scan_id, old_sev AS severity, old_state AS state, -1 AS d FROM scans WHERE old_on
        UNION ALL
        SELECT org_id, scan_id, new_sev, new_state, 1 FROM scans WHERE new_on
    )
    INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n)
        SELECT org_id, scan_id, severity, state, sum(d) FROM deltas
        GROUP BY org_id, scan_id, severity, state HAVING sum(d) <> 0;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_count_update AFTER UPDATE ON findings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION findings_count_update();

-- A new occurrence counts its finding, as it is now, for the scan.
CREATE FUNCTION occurrences_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n)
        SELECT f.org_id, o.scan_id, f.severity, f.state, count(*)
        FROM new_rows o JOIN findings.findings f ON f.id = o.finding_id
        WHERE f.verification_status = 'approved' GROUP BY f.org_id, o.scan_id, f.severity, f.state;
    RETURN NULL;
END $$;
CREATE TRIGGER occurrences_count_insert AFTER INSERT ON occurrences
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION occurrences_count_insert();
