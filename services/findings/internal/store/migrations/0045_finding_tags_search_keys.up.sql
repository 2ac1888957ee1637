-- A tag's rows carry their finding's search keys.
--
-- A tag with q or a file prefix joined each tag row's finding to check the
-- finding's keys (0017): at a million findings, a tag of 25,000 with a q
-- that matches none of them read 25,000 findings, about 108 ms, and a tag
-- of 10,000 with a q of 200 matches about 55 ms. The rows now carry the
-- finding's title, description and file keys, kept in step by the same
-- triggers as the other copies (0035), and migration 0046 puts them in the
-- tag indexes' entries, so that a tag's page and total check q and a file
-- prefix on the tag's index alone. The keys are generated from the
-- finding's texts, which a finding does not change today, but a copy
-- follows its finding whatever changes.
ALTER TABLE finding_tags ADD COLUMN title_key uuid, ADD COLUMN description_key uuid, ADD COLUMN file_key uuid;

UPDATE finding_tags t SET title_key = f.title_key, description_key = f.description_key, file_key = f.file_key
    FROM findings f WHERE f.id = t.finding_id;

CREATE OR REPLACE FUNCTION finding_tags_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_tags (finding_id, tag, org_id, approved, severity_rank, state, found_at, updated_at, category, repo_key,
            title_key, description_key, file_key)
        SELECT DISTINCT n.id, t.tag, n.org_id, n.verification_status = 'approved', n.severity_rank, n.state, n.found_at, n.updated_at,
            n.category, n.repo_key, n.title_key, n.description_key, n.file_key
        FROM new_rows n CROSS JOIN LATERAL unnest(n.tags) AS t(tag);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION finding_tags_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM findings.finding_tags t USING old_rows o JOIN new_rows n ON n.id = o.id
        WHERE t.finding_id = n.id AND o.tags IS DISTINCT FROM n.tags AND NOT (t.tag = ANY (n.tags));
    UPDATE findings.finding_tags t SET org_id = n.org_id, approved = n.verification_status = 'approved', severity_rank = n.severity_rank,
            state = n.state, found_at = n.found_at, updated_at = n.updated_at, category = n.category, repo_key = n.repo_key,
            title_key = n.title_key, description_key = n.description_key, file_key = n.file_key
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE t.finding_id = n.id
            AND (o.org_id, o.verification_status, o.severity_rank, o.state, o.found_at, o.updated_at, o.category, o.repo_key,
                    o.title_key, o.description_key, o.file_key)
                IS DISTINCT FROM (n.org_id, n.verification_status, n.severity_rank, n.state, n.found_at, n.updated_at, n.category, n.repo_key,
                    n.title_key, n.description_key, n.file_key);
    INSERT INTO findings.finding_tags (finding_id, tag, org_id, approved, severity_rank, state, found_at, updated_at, category, repo_key,
            title_key, description_key, file_key)
        SELECT DISTINCT n.id, t.tag, n.org_id, n.verification_status = 'approved', n.severity_rank, n.state, n.found_at, n.updated_at,
            n.category, n.repo_key, n.title_key, n.description_key, n.file_key
        FROM old_rows o JOIN new_rows n ON n.id = o.id CROSS JOIN LATERAL unnest(n.tags) AS t(tag)
        WHERE o.tags IS DISTINCT FROM n.tags
        ON CONFLICT (finding_id, tag) DO NOTHING;
    RETURN NULL;
END $$;
