-- Free text (q) and file prefix searches through the distinct texts.
--
-- Titles and descriptions come from the scanner's rules, and many findings
-- share a file, so an organization has few distinct texts and paths next to
-- its findings. Each finding carries a key per field, the MD5 of its title,
-- description and affected file as a uuid (stored generated columns, equal
-- to the fields by construction), and the distinct titles, descriptions and
-- paths are kept once per organization in search_texts (with the field they
-- come from) and search_files. A search first
-- matches the small tables (trigram index for q, byte-order range for a
-- prefix), then reads the matching keys' findings from one btree per key
-- column and order, stopping at the page; exact totals are sums of the key
-- counters below when one field matched.
--
-- q matches a finding when it is a case-insensitive substring (ILIKE) of
-- its title, its description or its affected file, each on its own: a match
-- never spans two fields.
--
-- The trigram index over every finding's joined text and the path index of
-- 0015 are replaced by the small tables' indexes.
DROP INDEX IF EXISTS findings_search_text;
DROP INDEX findings_search_file;

ALTER TABLE findings
    ADD COLUMN title_key       uuid GENERATED ALWAYS AS (md5(title)::uuid) STORED,
    ADD COLUMN description_key uuid GENERATED ALWAYS AS (md5(description)::uuid) STORED,
    ADD COLUMN file_key        uuid GENERATED ALWAYS AS (md5(affected_file)::uuid) STORED;

-- The distinct titles and descriptions and the distinct affected files of
-- each organization, keyed as the findings' key columns. A text's field
-- tells which key column to read, so that a word of a title reads the title
-- index alone. A row is never removed: a text no finding uses any more
-- matches no finding.
CREATE TABLE search_texts (
    org_id uuid NOT NULL,
    field  text NOT NULL CHECK (field IN ('title', 'description')),
    key    uuid NOT NULL,
    body   text NOT NULL,
    PRIMARY KEY (org_id, field, key)
);
CREATE TABLE search_files (
    org_id uuid NOT NULL,
    key    uuid NOT NULL,
    path   text NOT NULL,
    PRIMARY KEY (org_id, key)
);
-- A file prefix is a range in byte order, whatever the database's collation.
CREATE INDEX search_files_prefix ON search_files (org_id, (path COLLATE "C"));

-- Trigram indexes for q on the small tables, when pg_trgm exists (see 0007:
-- role provisioning creates it; without it q scans the small tables).
DO $$
DECLARE
    ns text;
BEGIN
    SELECT n.nspname INTO ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    IF ns IS NOT NULL THEN
        EXECUTE format('CREATE INDEX search_texts_trgm ON findings.search_texts USING gin (body %I.gin_trgm_ops)', ns);
        EXECUTE format('CREATE INDEX search_files_trgm ON findings.search_files USING gin (path %I.gin_trgm_ops)', ns);
    END IF;
END $$;

-- New texts and paths join the tables in the statement that brings them.
-- Each table takes its rows in key order, texts before files, so that two
-- transactions adding the same new texts wait for each other in one order
-- and never deadlock.
CREATE FUNCTION search_keys_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Most updates change no text: they add nothing.
    IF TG_OP = 'UPDATE' THEN
        IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE (o.org_id, o.title_key, o.description_key, o.file_key)
                    IS DISTINCT FROM (n.org_id, n.title_key, n.description_key, n.file_key)) THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO findings.search_texts (org_id, field, key, body)
        SELECT DISTINCT org_id, field, key, body FROM (
            SELECT n.org_id, 'title' AS field, n.title_key AS key, n.title AS body FROM new_rows n
            UNION ALL
            SELECT n.org_id, 'description', n.description_key, n.description FROM new_rows n
        ) t
        WHERE NOT EXISTS (SELECT 1 FROM findings.search_texts s WHERE s.org_id = t.org_id AND s.field = t.field AND s.key = t.key)
        ORDER BY org_id, field, key
        ON CONFLICT DO NOTHING;
    INSERT INTO findings.search_files (org_id, key, path)
        SELECT DISTINCT n.org_id, n.file_key, n.affected_file FROM new_rows n
        WHERE NOT EXISTS (SELECT 1 FROM findings.search_files s WHERE s.org_id = n.org_id AND s.key = n.file_key)
        ORDER BY 1, 2
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER search_keys_insert AFTER INSERT ON findings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_keys_add();
CREATE TRIGGER search_keys_update AFTER UPDATE ON findings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_keys_add();

-- Exact totals of q and prefix searches without counting the matches.
--
-- finding_key_counts keeps, like finding_counts (0003), delta rows of
-- approved findings per organization, field (title, description, file),
-- key, severity and state; FoldCounts sums each key's pending rows. Every
-- finding has one key per field, so the sum over a set of keys of one field
-- is the exact number of findings matching them.
CREATE TABLE finding_key_counts (
    org_id   uuid NOT NULL,
    field    text NOT NULL CHECK (field IN ('title', 'description', 'file')),
    key      uuid NOT NULL,
    severity text NOT NULL,
    state    text NOT NULL,
    n        bigint NOT NULL,
    pending  boolean NOT NULL DEFAULT true
);
CREATE INDEX finding_key_counts_key_idx ON finding_key_counts (org_id, field, key, severity, state) INCLUDE (n);
CREATE INDEX finding_key_counts_pending_idx ON finding_key_counts (org_id, field, key, severity, state) WHERE pending;

-- The (field, key) pairs of a finding.
CREATE FUNCTION finding_field_keys(title_key uuid, description_key uuid, file_key uuid)
    RETURNS TABLE (field text, key uuid) LANGUAGE sql IMMUTABLE AS $$
    VALUES ('title', title_key), ('description', description_key), ('file', file_key)
$$;

CREATE FUNCTION findings_key_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_key_counts (org_id, field, key, severity, state, n)
        SELECT n.org_id, k.field, k.key, n.severity, n.state, count(*)
        FROM new_rows n CROSS JOIN LATERAL findings.finding_field_keys(n.title_key, n.description_key, n.file_key) k
        WHERE n.verification_status = 'approved' GROUP BY 1, 2, 3, 4, 5;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_key_count_insert AFTER INSERT ON findings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION findings_key_count_insert();

-- A finding whose keys, severity, state or approval changed leaves its old
-- keys and joins its new ones. Keys whose deltas cancel out get no row.
CREATE FUNCTION findings_key_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH changed AS (
        SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.org_id, o.title_key, o.description_key, o.file_key, o.severity, o.state, o.verification_status)
            IS DISTINCT FROM (n.org_id, n.title_key, n.description_key, n.file_key, n.severity, n.state, n.verification_status)
    ), deltas AS (
        SELECT o.org_id, k.field, k.key, o.severity, o.state, -1 AS d
            FROM old_rows o JOIN changed c ON c.id = o.id
            CROSS JOIN LATERAL findings.finding_field_keys(o.title_key, o.description_key, o.file_key) k
            WHERE o.verification_status = 'approved'
        UNION ALL
        SELECT n.org_id, k.field, k.key, n.severity, n.state, 1
            FROM new_rows n JOIN changed c ON c.id = n.id
            CROSS JOIN LATERAL findings.finding_field_keys(n.title_key, n.description_key, n.file_key) k
            WHERE n.verification_status = 'approved'
    )
    INSERT INTO findings.finding_key_counts (org_id, field, key, severity, state, n)
        SELECT org_id, field, key, severity, state, sum(d) FROM deltas
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_key_count_update AFTER UPDATE ON findings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION findings_key_count_update();

-- The findings present when the triggers start. Creating the triggers
-- locked out writers until this transaction commits.
INSERT INTO search_texts (org_id, field, key, body)
    SELECT DISTINCT org_id, field, key, body FROM (
        SELECT org_id, 'title' AS field, title_key AS key, title AS body FROM findings
        UNION ALL
        SELECT org_id, 'description', description_key, description FROM findings
    ) t;
INSERT INTO search_files (org_id, key, path) SELECT DISTINCT org_id, file_key, affected_file FROM findings;
INSERT INTO finding_key_counts (org_id, field, key, severity, state, n, pending)
    SELECT f.org_id, k.field, k.key, f.severity, f.state, count(*), false
    FROM findings f CROSS JOIN LATERAL finding_field_keys(f.title_key, f.description_key, f.file_key) k
    WHERE f.verification_status = 'approved' GROUP BY 1, 2, 3, 4, 5;

-- A key's findings in list order, one index per key column and order
-- (found_at; severity rank then found_at), each carrying the other sort
-- keys and the severity and state, so that a page of a key with those
-- filters, in any order, reads the index alone and stops at the page.
CREATE INDEX findings_search_title ON findings (org_id, title_key, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state) WHERE verification_status = 'approved';
CREATE INDEX findings_search_title_rank ON findings (org_id, title_key, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state) WHERE verification_status = 'approved';
CREATE INDEX findings_search_description ON findings (org_id, description_key, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state) WHERE verification_status = 'approved';
CREATE INDEX findings_search_description_rank ON findings (org_id, description_key, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state) WHERE verification_status = 'approved';
CREATE INDEX findings_search_file ON findings (org_id, file_key, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state) WHERE verification_status = 'approved';
CREATE INDEX findings_search_file_rank ON findings (org_id, file_key, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state) WHERE verification_status = 'approved';
