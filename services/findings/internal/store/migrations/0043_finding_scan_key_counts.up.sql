-- Exact totals of a scan's findings matching q or a file prefix, without
-- counting them.
--
-- A scan's search was counted from the occurrences' key indexes (0020):
-- at a million findings, about 4 ms for the 20,000 findings of a rescan
-- of 100,000 with one title, on every page, where the page itself reads
-- 15 entries. finding_scan_key_counts keeps delta rows per scan, key
-- column, key, severity rank and state, like finding_key_counts (0017) per
-- organization: FoldCounts sums each key's rows. Every approved occurrence
-- counts once per column, under its finding's key of that column, so the
-- sum over one column's matching keys counts each match once.
--
-- An occurrence counts its finding as it is when the occurrence is
-- inserted (it copies the finding's keys, 0020, 0032). A finding whose
-- keys, severity, state or approval change leaves its old keys and joins
-- its new ones for every scan that saw it, in one statement trigger per
-- update of findings, as the scans' counters in finding_counts (0003).
-- Occurrences are only ever inserted (never deleted, nor moved to another
-- finding).
CREATE TABLE finding_scan_key_counts (
    scan_id       uuid NOT NULL,
    field         text NOT NULL CHECK (field IN ('title', 'description', 'file')),
    key           uuid NOT NULL,
    severity_rank smallint NOT NULL,
    state         text NOT NULL,
    n             bigint NOT NULL,
    pending       boolean NOT NULL DEFAULT true
);
CREATE INDEX finding_scan_key_counts_key_idx ON finding_scan_key_counts (scan_id, field, key, severity_rank, state) INCLUDE (n);
CREATE INDEX finding_scan_key_counts_pending_idx ON finding_scan_key_counts (scan_id, field, key, severity_rank, state) WHERE pending;

CREATE FUNCTION finding_scan_key_counts_occurrences() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_scan_key_counts (scan_id, field, key, severity_rank, state, n)
        SELECT o.scan_id, k.field, k.key, o.severity_rank, o.state, count(*)
        FROM new_rows o CROSS JOIN LATERAL findings.finding_field_keys(o.title_key, o.description_key, o.file_key) k
        WHERE o.approved GROUP BY 1, 2, 3, 4, 5;
    RETURN NULL;
END $$;
CREATE TRIGGER finding_scan_key_counts_occurrences AFTER INSERT ON occurrences
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_scan_key_counts_occurrences();

CREATE FUNCTION finding_scan_key_counts_findings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH changed AS (
        SELECT o.id, o.verification_status = 'approved' AS old_on, o.severity_rank AS old_rank, o.state AS old_state,
            o.title_key AS old_title, o.description_key AS old_description, o.file_key AS old_file,
            n.verification_status = 'approved' AS new_on, n.severity_rank AS new_rank, n.state AS new_state,
            n.title_key AS new_title, n.description_key AS new_description, n.file_key AS new_file
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.verification_status = 'approved', o.severity_rank, o.state, o.title_key, o.description_key, o.file_key)
            IS DISTINCT FROM (n.verification_status = 'approved', n.severity_rank, n.state, n.title_key, n.description_key, n.file_key)
            AND (o.verification_status = 'approved' OR n.verification_status = 'approved')
    ), scans AS (
        SELECT c.*, oc.scan_id FROM changed c CROSS JOIN LATERAL (
            SELECT oc.scan_id FROM findings.occurrences oc WHERE oc.finding_id = c.id OFFSET 0) oc
    ), deltas AS (
        SELECT s.scan_id, k.field, k.key, s.old_rank AS severity_rank, s.old_state AS state, -1 AS d
        FROM scans s CROSS JOIN LATERAL findings.finding_field_keys(s.old_title, s.old_description, s.old_file) k
        WHERE s.old_on
        UNION ALL
        SELECT s.scan_id, k.field, k.key, s.new_rank, s.new_state, 1
        FROM scans s CROSS JOIN LATERAL findings.finding_field_keys(s.new_title, s.new_description, s.new_file) k
        WHERE s.new_on
    )
    INSERT INTO findings.finding_scan_key_counts (scan_id, field, key, severity_rank, state, n)
        SELECT scan_id, field, key, severity_rank, state, sum(d) FROM deltas
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0;
    RETURN NULL;
END $$;
CREATE TRIGGER finding_scan_key_counts_update AFTER UPDATE ON findings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_scan_key_counts_findings();

INSERT INTO finding_scan_key_counts (scan_id, field, key, severity_rank, state, n, pending)
    SELECT o.scan_id, k.field, k.key, o.severity_rank, o.state, count(*), false
    FROM occurrences o CROSS JOIN LATERAL finding_field_keys(o.title_key, o.description_key, o.file_key) k
    WHERE o.approved GROUP BY 1, 2, 3, 4, 5;
