-- The tag rows and the occurrences name their finding without a foreign
-- key. A foreign key is checked row by row, with a lookup and a row lock on
-- the finding, and intake writes two tag rows and an occurrence for every
-- finding it receives: the checks were about a tenth of a batch's cost.
-- Neither can name a finding that does not exist: tag rows are written only
-- by the findings' own triggers (0013), from the rows being inserted or
-- updated; occurrences only by intake, for the ids it has just inserted or
-- locked in the same transaction; and findings are never deleted. The
-- occurrences keep their foreign key to scans, checked once per scan row.
ALTER TABLE finding_tags DROP CONSTRAINT finding_tags_finding_id_fkey;
ALTER TABLE occurrences DROP CONSTRAINT occurrences_finding_id_fkey;

-- A scan's counts take each new occurrence's approval, severity and state
-- from the occurrence itself, which carries them (0002), instead of looking
-- up every finding again; the organization comes from the scan.
CREATE OR REPLACE FUNCTION occurrences_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n)
        SELECT s.org_id, o.scan_id,
            CASE o.severity_rank WHEN 5 THEN 'critical' WHEN 4 THEN 'high' WHEN 3 THEN 'medium' WHEN 2 THEN 'low' ELSE 'info' END,
            o.state, count(*)
        FROM new_rows o JOIN findings.scans s ON s.id = o.scan_id
        WHERE o.approved GROUP BY 1, 2, 3, 4;
    RETURN NULL;
END $$;
