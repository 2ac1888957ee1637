-- Exact totals of q and file prefix searches with a repository or a
-- category, without counting them.
--
-- The key indexes' entries carry the repository and the category (0034),
-- so such a search was counted from the entries of every matching key, to
-- keep those of the repository or category: at a million findings 10–18 ms
-- for a prefix of 140 paths with a category or a repository, 32–55 ms for a
-- title held by 200,000 findings with a repository. Without its total the
-- search could neither read a deep page from the nearer end nor skip the
-- severities before a page sorted by severity. finding_key_search_counts
-- keeps delta rows per organization, field, key, repository, category,
-- severity and state, appended by the statement triggers that keep
-- finding_key_counts (0017), whose functions now write both; FoldCounts
-- sums each key's rows. A search with neither filter keeps reading
-- finding_key_counts, which holds far fewer rows per key.
--
-- Findings are locked against writes until this transaction commits, so
-- that no report running under the former functions commits findings the
-- backfill below does not see.
LOCK TABLE findings IN SHARE MODE;

CREATE TABLE finding_key_search_counts (
    org_id   uuid NOT NULL,
    field    text NOT NULL CHECK (field IN ('title', 'description', 'file')),
    key      uuid NOT NULL,
    repo_key text NOT NULL,
    category text NOT NULL,
    severity text NOT NULL,
    state    text NOT NULL,
    n        bigint NOT NULL,
    pending  boolean NOT NULL DEFAULT true
);
CREATE INDEX finding_key_search_counts_key_idx ON finding_key_search_counts (org_id, field, key, repo_key, category, severity, state)
    INCLUDE (n);
CREATE INDEX finding_key_search_counts_pending_idx ON finding_key_search_counts (org_id, field, key, repo_key, category, severity, state)
    WHERE pending;

-- The deltas are grouped per repository and category first, and those
-- groups summed per key, so that each finding's keys are taken once.
CREATE OR REPLACE FUNCTION findings_key_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH g AS (
        SELECT n.org_id, k.field, k.key, n.repo_key, n.category, n.severity, n.state, count(*) AS n
        FROM new_rows n CROSS JOIN LATERAL findings.finding_field_keys(n.title_key, n.description_key, n.file_key) k
        WHERE n.verification_status = 'approved' GROUP BY 1, 2, 3, 4, 5, 6, 7
    ), by_key AS (
        INSERT INTO findings.finding_key_counts (org_id, field, key, severity, state, n)
            SELECT org_id, field, key, severity, state, sum(n) FROM g GROUP BY 1, 2, 3, 4, 5
    )
    INSERT INTO findings.finding_key_search_counts (org_id, field, key, repo_key, category, severity, state, n)
        SELECT org_id, field, key, repo_key, category, severity, state, n FROM g;
    RETURN NULL;
END $$;

-- A finding whose keys, repository, category, severity, state or approval
-- changed leaves its old keys and joins its new ones. Keys whose deltas
-- cancel out get no row.
CREATE OR REPLACE FUNCTION findings_key_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH changed AS (
        SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.org_id, o.title_key, o.description_key, o.file_key, o.repo_key, o.category, o.severity, o.state, o.verification_status)
            IS DISTINCT FROM (n.org_id, n.title_key, n.description_key, n.file_key, n.repo_key, n.category, n.severity, n.state, n.verification_status)
    ), deltas AS (
        SELECT o.org_id, k.field, k.key, o.repo_key, o.category, o.severity, o.state, -1 AS d
            FROM old_rows o JOIN changed c ON c.id = o.id
            CROSS JOIN LATERAL findings.finding_field_keys(o.title_key, o.description_key, o.file_key) k
            WHERE o.verification_status = 'approved'
        UNION ALL
        SELECT n.org_id, k.field, k.key, n.repo_key, n.category, n.severity, n.state, 1
            FROM new_rows n JOIN changed c ON c.id = n.id
            CROSS JOIN LATERAL findings.finding_field_keys(n.title_key, n.description_key, n.file_key) k
            WHERE n.verification_status = 'approved'
    ), g AS (
        SELECT org_id, field, key, repo_key, category, severity, state, sum(d) AS n FROM deltas GROUP BY 1, 2, 3, 4, 5, 6, 7
    ), by_key AS (
        INSERT INTO findings.finding_key_counts (org_id, field, key, severity, state, n)
            SELECT org_id, field, key, severity, state, sum(n) FROM g GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0
    )
    INSERT INTO findings.finding_key_search_counts (org_id, field, key, repo_key, category, severity, state, n)
        SELECT org_id, field, key, repo_key, category, severity, state, n FROM g WHERE n <> 0;
    RETURN NULL;
END $$;

INSERT INTO finding_key_search_counts (org_id, field, key, repo_key, category, severity, state, n, pending)
    SELECT f.org_id, k.field, k.key, f.repo_key, f.category, f.severity, f.state, count(*), false
    FROM findings f CROSS JOIN LATERAL finding_field_keys(f.title_key, f.description_key, f.file_key) k
    WHERE f.verification_status = 'approved' GROUP BY 1, 2, 3, 4, 5, 6, 7;
