-- The tag filter reads a table of its own rather than a GIN index on the
-- tags array: a GIN index yields the matches unordered, so a page of a
-- common tag read every match and sorted it. finding_tags holds one row per
-- finding and distinct tag with copies of the finding's list keys (approval,
-- severity rank, state, found_at, updated_at), like the occurrences (0002),
-- so that a page of a tag is an index range scan in the list's order and
-- its exact total an index-only count. Triggers keep the rows equal to the
-- findings in the changing transaction.
CREATE TABLE finding_tags (
    finding_id    uuid NOT NULL REFERENCES findings (id),
    tag           text NOT NULL,
    org_id        uuid NOT NULL,
    approved      boolean NOT NULL,
    severity_rank smallint NOT NULL,
    state         text NOT NULL,
    found_at      timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (finding_id, tag)
);

-- One index per sort key, ending in found_at, finding_id and carrying the
-- other keys, so that a page with a severity, state or found_at filter in
-- either direction, and its total, read the index alone.
CREATE INDEX finding_tags_found ON finding_tags (org_id, tag, found_at, finding_id) INCLUDE (severity_rank, state, updated_at) WHERE approved;
CREATE INDEX finding_tags_rank ON finding_tags (org_id, tag, severity_rank, found_at, finding_id) INCLUDE (state, updated_at) WHERE approved;
CREATE INDEX finding_tags_updated ON finding_tags (org_id, tag, updated_at, found_at, finding_id) INCLUDE (severity_rank, state) WHERE approved;

CREATE FUNCTION finding_tags_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_tags (finding_id, tag, org_id, approved, severity_rank, state, found_at, updated_at)
        SELECT DISTINCT n.id, t.tag, n.org_id, n.verification_status = 'approved', n.severity_rank, n.state, n.found_at, n.updated_at
        FROM new_rows n CROSS JOIN LATERAL unnest(n.tags) AS t(tag);
    RETURN NULL;
END $$;
CREATE TRIGGER finding_tags_insert AFTER INSERT ON findings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_tags_insert();

-- A finding whose tags changed loses the rows of the tags it no longer has
-- and gains rows for its new ones; every row of a changed finding takes its
-- keys.
CREATE FUNCTION finding_tags_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM findings.finding_tags t USING old_rows o JOIN new_rows n ON n.id = o.id
        WHERE t.finding_id = n.id AND o.tags IS DISTINCT FROM n.tags AND NOT (t.tag = ANY (n.tags));
    UPDATE findings.finding_tags t SET org_id = n.org_id, approved = n.verification_status = 'approved', severity_rank = n.severity_rank,
            state = n.state, found_at = n.found_at, updated_at = n.updated_at
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE t.finding_id = n.id
            AND (o.org_id, o.verification_status, o.severity_rank, o.state, o.found_at, o.updated_at)
                IS DISTINCT FROM (n.org_id, n.verification_status, n.severity_rank, n.state, n.found_at, n.updated_at);
    INSERT INTO findings.finding_tags (finding_id, tag, org_id, approved, severity_rank, state, found_at, updated_at)
        SELECT DISTINCT n.id, t.tag, n.org_id, n.verification_status = 'approved', n.severity_rank, n.state, n.found_at, n.updated_at
        FROM old_rows o JOIN new_rows n ON n.id = o.id CROSS JOIN LATERAL unnest(n.tags) AS t(tag)
        WHERE o.tags IS DISTINCT FROM n.tags
        ON CONFLICT (finding_id, tag) DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER finding_tags_update AFTER UPDATE ON findings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_tags_update();

-- The findings present when the triggers start. Creating the triggers
-- locked out writers until this transaction commits.
INSERT INTO finding_tags (finding_id, tag, org_id, approved, severity_rank, state, found_at, updated_at)
    SELECT DISTINCT f.id, t.tag, f.org_id, f.verification_status = 'approved', f.severity_rank, f.state, f.found_at, f.updated_at
    FROM findings f CROSS JOIN LATERAL unnest(f.tags) AS t(tag);

-- The array index is no longer used.
DROP INDEX findings_search_tags;
