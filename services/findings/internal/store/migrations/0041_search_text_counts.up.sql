-- The number of distinct texts and paths of each organization and field,
-- without counting them.
--
-- A search whose q matches at least 64 texts of a field decides whether
-- most of them match (and then holds the few that do not, see the key
-- lookup in the store) by counting the field's texts from its primary key,
-- up to twice the matches: 5,000 entries for a word in every description,
-- about a third of that lookup. search_text_counts keeps delta rows per
-- organization and field ('file' for the paths), appended by the statement
-- trigger that adds new texts and paths (0022), for the rows it inserts
-- (a text already there inserts nothing); FoldCounts sums each key's rows.
-- Texts and paths are never removed (0017).
--
-- Findings are locked against writes until this transaction commits, so
-- that no report running under the former function commits texts the
-- backfill below does not see.
LOCK TABLE findings IN SHARE MODE;

CREATE TABLE search_text_counts (
    org_id  uuid NOT NULL,
    field   text NOT NULL CHECK (field IN ('title', 'description', 'file')),
    n       bigint NOT NULL,
    pending boolean NOT NULL DEFAULT true
);
CREATE INDEX search_text_counts_key_idx ON search_text_counts (org_id, field) INCLUDE (n);
CREATE INDEX search_text_counts_pending_idx ON search_text_counts (org_id, field) WHERE pending;

CREATE OR REPLACE FUNCTION search_keys_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Most updates change no text: they add nothing.
    IF TG_OP = 'UPDATE' THEN
        IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE (o.org_id, o.title_key, o.description_key, o.file_key)
                    IS DISTINCT FROM (n.org_id, n.title_key, n.description_key, n.file_key)) THEN
            RETURN NULL;
        END IF;
    END IF;
    WITH added AS (
        INSERT INTO findings.search_texts (org_id, field, key, body)
            SELECT DISTINCT org_id, field, key, body FROM (
                SELECT n.org_id, 'title' AS field, n.title_key AS key, n.title AS body FROM new_rows n
                UNION ALL
                SELECT n.org_id, 'description', n.description_key, n.description FROM new_rows n
            ) t
            ORDER BY org_id, field, key
            ON CONFLICT DO NOTHING
            RETURNING org_id, field
    )
    INSERT INTO findings.search_text_counts (org_id, field, n)
        SELECT org_id, field, count(*) FROM added GROUP BY 1, 2;
    WITH added AS (
        INSERT INTO findings.search_files (org_id, key, path)
            SELECT DISTINCT n.org_id, n.file_key, n.affected_file FROM new_rows n
            ORDER BY 1, 2
            ON CONFLICT DO NOTHING
            RETURNING org_id
    )
    INSERT INTO findings.search_text_counts (org_id, field, n)
        SELECT org_id, 'file', count(*) FROM added GROUP BY 1;
    RETURN NULL;
END $$;

INSERT INTO search_text_counts (org_id, field, n, pending)
    SELECT org_id, field, count(*), false FROM search_texts GROUP BY 1, 2
    UNION ALL
    SELECT org_id, 'file', count(*), false FROM search_files GROUP BY 1;
