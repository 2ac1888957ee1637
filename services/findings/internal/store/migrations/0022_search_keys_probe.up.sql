-- New texts and paths join search_texts and search_files through the
-- tables' primary keys alone. The NOT EXISTS filter of 0017 let the planner
-- hash the organization's every distinct text and path on each report (a
-- sequential scan of both tables per batch, growing with the organization),
-- where each of the batch's few texts needs one probe: ON CONFLICT DO
-- NOTHING makes that probe and writes nothing for a text already there.
-- Rows are still taken in key order, texts before files, so that two
-- reports bringing the same new texts wait for each other in one order.
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
    INSERT INTO findings.search_texts (org_id, field, key, body)
        SELECT DISTINCT org_id, field, key, body FROM (
            SELECT n.org_id, 'title' AS field, n.title_key AS key, n.title AS body FROM new_rows n
            UNION ALL
            SELECT n.org_id, 'description', n.description_key, n.description FROM new_rows n
        ) t
        ORDER BY org_id, field, key
        ON CONFLICT DO NOTHING;
    INSERT INTO findings.search_files (org_id, key, path)
        SELECT DISTINCT n.org_id, n.file_key, n.affected_file FROM new_rows n
        ORDER BY 1, 2
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
