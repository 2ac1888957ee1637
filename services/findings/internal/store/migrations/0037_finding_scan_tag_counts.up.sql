-- Exact totals of a scan's findings with a tag, without counting them.
--
-- A scan's findings with a tag were counted by intersecting the scan's
-- occurrences with the tag's rows: at a million findings, 11 ms for a scan
-- of 10,000 and a tag of 25,000, 23 ms for a rescan of 100,000 and a tag of
-- 10,000 (a hash of one side, probed by each row of the other), for every
-- page. finding_scan_tag_counts keeps delta rows per organization, scan,
-- tag, severity rank and state, like finding_tag_counts (0015) per
-- organization: FoldCounts sums each key's rows.
--
-- A count is of pairs of an occurrence and a tag row of one finding whose
-- tag row is approved, with the tag row's copies of the severity rank and
-- state (which follow the finding, 0013). Each pair is counted by the
-- statement that completes it: an occurrence inserted for a finding with
-- tag rows (the occurrence trigger), or a tag row inserted for a finding
-- with occurrences (the tag row trigger, when a finding's tags change);
-- a report inserts a new finding, and so its tag rows, before its
-- occurrence, in separate statements. A tag row's update or deletion
-- moves or removes the counts of all its finding's occurrences.
-- Occurrences are only ever inserted (never deleted, nor moved to another
-- finding), as the scans' counters in finding_counts also assume. Each
-- trigger looks up the other side's rows of each of its rows by index (a
-- lateral subquery the planner keeps apart): joined, a small table's
-- whole other side was read per statement, 3 ms a report of 100 findings
-- at 20,000 tag rows and growing with them.
CREATE TABLE finding_scan_tag_counts (
    org_id        uuid NOT NULL,
    scan_id       uuid NOT NULL,
    tag           text NOT NULL,
    severity_rank smallint NOT NULL,
    state         text NOT NULL,
    n             bigint NOT NULL,
    pending       boolean NOT NULL DEFAULT true
);
CREATE INDEX finding_scan_tag_counts_key_idx ON finding_scan_tag_counts (org_id, scan_id, tag, severity_rank, state) INCLUDE (n);
CREATE INDEX finding_scan_tag_counts_pending_idx ON finding_scan_tag_counts (org_id, scan_id, tag, severity_rank, state) WHERE pending;

CREATE FUNCTION finding_scan_tag_counts_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO findings.finding_scan_tag_counts (org_id, scan_id, tag, severity_rank, state, n)
            SELECT t.org_id, o.scan_id, t.tag, t.severity_rank, t.state, count(*)
            FROM new_rows t CROSS JOIN LATERAL (
                SELECT oc.scan_id FROM findings.occurrences oc WHERE oc.finding_id = t.finding_id OFFSET 0) o
            WHERE t.approved GROUP BY 1, 2, 3, 4, 5;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO findings.finding_scan_tag_counts (org_id, scan_id, tag, severity_rank, state, n)
            SELECT t.org_id, o.scan_id, t.tag, t.severity_rank, t.state, -count(*)
            FROM old_rows t CROSS JOIN LATERAL (
                SELECT oc.scan_id FROM findings.occurrences oc WHERE oc.finding_id = t.finding_id OFFSET 0) o
            WHERE t.approved GROUP BY 1, 2, 3, 4, 5;
    ELSE
        WITH changed AS (
            SELECT o.finding_id, o.tag, o.org_id AS old_org, o.approved AS old_on, o.severity_rank AS old_rank, o.state AS old_state,
                n.org_id AS new_org, n.approved AS new_on, n.severity_rank AS new_rank, n.state AS new_state
            FROM old_rows o JOIN new_rows n ON n.finding_id = o.finding_id AND n.tag = o.tag
            WHERE (o.org_id, o.approved, o.severity_rank, o.state) IS DISTINCT FROM (n.org_id, n.approved, n.severity_rank, n.state)
        ), scans AS (
            SELECT c.*, o.scan_id FROM changed c CROSS JOIN LATERAL (
                SELECT oc.scan_id FROM findings.occurrences oc WHERE oc.finding_id = c.finding_id OFFSET 0) o
        ), deltas AS (
            SELECT old_org AS org_id, scan_id, tag, old_rank AS severity_rank, old_state AS state, -1 AS d FROM scans WHERE old_on
            UNION ALL
            SELECT new_org, scan_id, tag, new_rank, new_state, 1 FROM scans WHERE new_on
        )
        INSERT INTO findings.finding_scan_tag_counts (org_id, scan_id, tag, severity_rank, state, n)
            SELECT org_id, scan_id, tag, severity_rank, state, sum(d) FROM deltas
            GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER finding_scan_tag_counts_insert AFTER INSERT ON finding_tags
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_scan_tag_counts_tags();
CREATE TRIGGER finding_scan_tag_counts_update AFTER UPDATE ON finding_tags
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_scan_tag_counts_tags();
CREATE TRIGGER finding_scan_tag_counts_delete AFTER DELETE ON finding_tags
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_scan_tag_counts_tags();

CREATE FUNCTION finding_scan_tag_counts_occurrences() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_scan_tag_counts (org_id, scan_id, tag, severity_rank, state, n)
        SELECT t.org_id, o.scan_id, t.tag, t.severity_rank, t.state, count(*)
        FROM new_rows o CROSS JOIN LATERAL (
            SELECT ft.org_id, ft.tag, ft.severity_rank, ft.state FROM findings.finding_tags ft
            WHERE ft.finding_id = o.finding_id AND ft.approved OFFSET 0) t
        GROUP BY 1, 2, 3, 4, 5;
    RETURN NULL;
END $$;
CREATE TRIGGER finding_scan_tag_counts_occurrences AFTER INSERT ON occurrences
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_scan_tag_counts_occurrences();

INSERT INTO finding_scan_tag_counts (org_id, scan_id, tag, severity_rank, state, n, pending)
    SELECT t.org_id, o.scan_id, t.tag, t.severity_rank, t.state, count(*), false
    FROM occurrences o JOIN finding_tags t ON t.finding_id = o.finding_id
    WHERE t.approved GROUP BY 1, 2, 3, 4, 5;
