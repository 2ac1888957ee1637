-- Exact totals of a tag with a repository or a category, without counting
-- them.
--
-- A tag's rows carry their finding's repository and category (0035), and
-- its indexes' entries too (0036), so a tag with either was counted from
-- the tag's index entries alone: every entry of the tag, to keep those of
-- the repository or category (4.3–8.2 ms for a tag of 25,000 at a million
-- findings, page 1 and last page). finding_tag_search_counts keeps delta
-- rows per organization, tag, repository, category, severity rank and
-- state, appended by the same statement triggers as finding_tag_counts
-- (0015), whose function now writes both; FoldCounts sums each key's rows.
-- A tag alone keeps reading finding_tag_counts, which has far fewer rows
-- per tag.
CREATE TABLE finding_tag_search_counts (
    org_id        uuid NOT NULL,
    tag           text NOT NULL,
    repo_key      text NOT NULL,
    category      text NOT NULL,
    severity_rank smallint NOT NULL,
    state         text NOT NULL,
    n             bigint NOT NULL,
    pending       boolean NOT NULL DEFAULT true
);
CREATE INDEX finding_tag_search_counts_key_idx ON finding_tag_search_counts (org_id, tag, repo_key, category, severity_rank, state)
    INCLUDE (n);
CREATE INDEX finding_tag_search_counts_pending_idx ON finding_tag_search_counts (org_id, tag, repo_key, category, severity_rank, state)
    WHERE pending;

CREATE OR REPLACE FUNCTION finding_tag_counts_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO findings.finding_tag_counts (org_id, tag, severity_rank, state, n)
            SELECT org_id, tag, severity_rank, state, count(*) FROM new_rows WHERE approved GROUP BY 1, 2, 3, 4;
        INSERT INTO findings.finding_tag_search_counts (org_id, tag, repo_key, category, severity_rank, state, n)
            SELECT org_id, tag, repo_key, category, severity_rank, state, count(*) FROM new_rows WHERE approved GROUP BY 1, 2, 3, 4, 5, 6;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO findings.finding_tag_counts (org_id, tag, severity_rank, state, n)
            SELECT org_id, tag, severity_rank, state, -count(*) FROM old_rows WHERE approved GROUP BY 1, 2, 3, 4;
        INSERT INTO findings.finding_tag_search_counts (org_id, tag, repo_key, category, severity_rank, state, n)
            SELECT org_id, tag, repo_key, category, severity_rank, state, -count(*) FROM old_rows WHERE approved GROUP BY 1, 2, 3, 4, 5, 6;
    ELSE
        WITH deltas AS (
            SELECT org_id, tag, severity_rank, state, -1 AS d FROM old_rows WHERE approved
            UNION ALL
            SELECT org_id, tag, severity_rank, state, 1 FROM new_rows WHERE approved
        )
        INSERT INTO findings.finding_tag_counts (org_id, tag, severity_rank, state, n)
            SELECT org_id, tag, severity_rank, state, sum(d) FROM deltas GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0;
        WITH deltas AS (
            SELECT org_id, tag, repo_key, category, severity_rank, state, -1 AS d FROM old_rows WHERE approved
            UNION ALL
            SELECT org_id, tag, repo_key, category, severity_rank, state, 1 FROM new_rows WHERE approved
        )
        INSERT INTO findings.finding_tag_search_counts (org_id, tag, repo_key, category, severity_rank, state, n)
            SELECT org_id, tag, repo_key, category, severity_rank, state, sum(d) FROM deltas GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(d) <> 0;
    END IF;
    RETURN NULL;
END $$;

INSERT INTO finding_tag_search_counts (org_id, tag, repo_key, category, severity_rank, state, n, pending)
    SELECT org_id, tag, repo_key, category, severity_rank, state, count(*), false FROM finding_tags WHERE approved
    GROUP BY 1, 2, 3, 4, 5, 6;
