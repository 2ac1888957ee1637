-- A tag's rows carry their finding's category and repository.
--
-- finding_tags (0013) holds a row per finding and tag with copies of the
-- finding's list keys, so that a tag's page and total read its indexes
-- alone. A tag with a category or a repository joined each tag row's
-- finding to check them: at a million findings, a tag of 25,000 with a
-- repository took 21 to 59 ms, a finding row read per tag row. The rows
-- now carry both, kept in step by the same triggers (the category of a
-- finding does not change today, but a copy follows its finding whatever
-- changes), and migration 0036 puts them in the tag indexes' entries.
ALTER TABLE finding_tags ADD COLUMN category text, ADD COLUMN repo_key text;

UPDATE finding_tags t SET category = f.category, repo_key = f.repo_key FROM findings f WHERE f.id = t.finding_id;

ALTER TABLE finding_tags ALTER COLUMN category SET NOT NULL, ALTER COLUMN repo_key SET NOT NULL;

CREATE OR REPLACE FUNCTION finding_tags_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_tags (finding_id, tag, org_id, approved, severity_rank, state, found_at, updated_at, category, repo_key)
        SELECT DISTINCT n.id, t.tag, n.org_id, n.verification_status = 'approved', n.severity_rank, n.state, n.found_at, n.updated_at,
            n.category, n.repo_key
        FROM new_rows n CROSS JOIN LATERAL unnest(n.tags) AS t(tag);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION finding_tags_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM findings.finding_tags t USING old_rows o JOIN new_rows n ON n.id = o.id
        WHERE t.finding_id = n.id AND o.tags IS DISTINCT FROM n.tags AND NOT (t.tag = ANY (n.tags));
    UPDATE findings.finding_tags t SET org_id = n.org_id, approved = n.verification_status = 'approved', severity_rank = n.severity_rank,
            state = n.state, found_at = n.found_at, updated_at = n.updated_at, category = n.category, repo_key = n.repo_key
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE t.finding_id = n.id
            AND (o.org_id, o.verification_status, o.severity_rank, o.state, o.found_at, o.updated_at, o.category, o.repo_key)
                IS DISTINCT FROM (n.org_id, n.verification_status, n.severity_rank, n.state, n.found_at, n.updated_at, n.category, n.repo_key);
    INSERT INTO findings.finding_tags (finding_id, tag, org_id, approved, severity_rank, state, found_at, updated_at, category, repo_key)
        SELECT DISTINCT n.id, t.tag, n.org_id, n.verification_status = 'approved', n.severity_rank, n.state, n.found_at, n.updated_at,
            n.category, n.repo_key
        FROM old_rows o JOIN new_rows n ON n.id = o.id CROSS JOIN LATERAL unnest(n.tags) AS t(tag)
        WHERE o.tags IS DISTINCT FROM n.tags
        ON CONFLICT (finding_id, tag) DO NOTHING;
    RETURN NULL;
END $$;
