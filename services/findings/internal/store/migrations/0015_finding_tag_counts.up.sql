-- Exact totals of a tag (with severity and state) without counting its
-- matches; file prefix pages in every order from the index alone; an index
-- of their own for a repository and a category together.
--
-- finding_tag_counts keeps delta rows of approved findings per
-- organization, tag, severity rank and state, like finding_counts (0003):
-- triggers on finding_tags (whose own triggers follow the findings) append
-- them in the changing transaction, FoldCounts sums each key's rows.
CREATE TABLE finding_tag_counts (
    org_id        uuid NOT NULL,
    tag           text NOT NULL,
    severity_rank smallint NOT NULL,
    state         text NOT NULL,
    n             bigint NOT NULL,
    pending       boolean NOT NULL DEFAULT true
);
CREATE INDEX finding_tag_counts_key_idx ON finding_tag_counts (org_id, tag, severity_rank, state) INCLUDE (n);
CREATE INDEX finding_tag_counts_pending_idx ON finding_tag_counts (org_id, tag, severity_rank, state) WHERE pending;

CREATE FUNCTION finding_tag_counts_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO findings.finding_tag_counts (org_id, tag, severity_rank, state, n)
            SELECT org_id, tag, severity_rank, state, count(*) FROM new_rows WHERE approved GROUP BY 1, 2, 3, 4;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO findings.finding_tag_counts (org_id, tag, severity_rank, state, n)
            SELECT org_id, tag, severity_rank, state, -count(*) FROM old_rows WHERE approved GROUP BY 1, 2, 3, 4;
    ELSE
        WITH deltas AS (
            SELECT org_id, tag, severity_rank, state, -1 AS d FROM old_rows WHERE approved
            UNION ALL
            SELECT org_id, tag, severity_rank, state, 1 FROM new_rows WHERE approved
        )
        INSERT INTO findings.finding_tag_counts (org_id, tag, severity_rank, state, n)
            SELECT org_id, tag, severity_rank, state, sum(d) FROM deltas GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER finding_tag_counts_insert AFTER INSERT ON finding_tags
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_tag_counts_delta();
CREATE TRIGGER finding_tag_counts_update AFTER UPDATE ON finding_tags
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_tag_counts_delta();
CREATE TRIGGER finding_tag_counts_delete AFTER DELETE ON finding_tags
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_tag_counts_delta();

INSERT INTO finding_tag_counts (org_id, tag, severity_rank, state, n, pending)
    SELECT org_id, tag, severity_rank, state, count(*), false FROM finding_tags WHERE approved GROUP BY 1, 2, 3, 4;

-- The file prefix index carries the sort keys, so that a prefix's page
-- sorted by severity or update time and its total read the index alone.
DROP INDEX findings_search_file;
CREATE INDEX findings_search_file ON findings (org_id, (affected_file COLLATE "C"), found_at, id)
    INCLUDE (severity_rank, updated_at) WHERE verification_status = 'approved';

-- A repository and a category together (the findings of one kind in one
-- repository) have an index of their own in each order, so that a deep
-- page of the pair does not read every finding of the category.
CREATE INDEX findings_search_repo_category ON findings (org_id, repo_key, category, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state) WHERE verification_status = 'approved';
CREATE INDEX findings_search_repo_category_rank ON findings (org_id, repo_key, category, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state) WHERE verification_status = 'approved';
