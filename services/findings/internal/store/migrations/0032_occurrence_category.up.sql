-- A scan's findings of one category are found among the scan's occurrences.
--
-- A category is a finding's column: within a scan, a list or a total with
-- a category looked up each of the scan's occurrences' findings to compare
-- it, a row of the findings visited per occurrence (380 ms for a rescan of
-- 100,000 among 1,000,000 findings). Each occurrence now carries a copy of
-- its finding's category, as it carries the list keys (0002) and the key
-- columns (0020), kept in step by the same triggers, and migration 0033
-- indexes a scan's approved occurrences by category.
ALTER TABLE occurrences ADD COLUMN category text;

UPDATE occurrences o SET category = f.category FROM findings f WHERE f.id = o.finding_id;

ALTER TABLE occurrences ALTER COLUMN category SET NOT NULL;

CREATE OR REPLACE FUNCTION occurrences_keys_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT f.verification_status = 'approved', f.severity_rank, f.state, f.found_at, f.updated_at,
            f.title_key, f.description_key, f.file_key, f.category
        INTO NEW.approved, NEW.severity_rank, NEW.state, NEW.found_at, NEW.updated_at,
            NEW.title_key, NEW.description_key, NEW.file_key, NEW.category
        FROM findings.findings f WHERE f.id = NEW.finding_id;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION findings_keys_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE findings.occurrences SET approved = NEW.verification_status = 'approved', severity_rank = NEW.severity_rank,
        state = NEW.state, found_at = NEW.found_at, updated_at = NEW.updated_at,
        title_key = NEW.title_key, description_key = NEW.description_key, file_key = NEW.file_key,
        category = NEW.category
        WHERE finding_id = NEW.id;
    RETURN NULL;
END $$;

DROP TRIGGER findings_keys ON findings;
CREATE TRIGGER findings_keys AFTER UPDATE OF verification_status, severity_rank, state, found_at, updated_at,
        title, description, affected_file, category ON findings
    FOR EACH ROW WHEN (OLD.verification_status IS DISTINCT FROM NEW.verification_status
        OR OLD.severity_rank IS DISTINCT FROM NEW.severity_rank
        OR OLD.state IS DISTINCT FROM NEW.state
        OR OLD.found_at IS DISTINCT FROM NEW.found_at
        OR OLD.updated_at IS DISTINCT FROM NEW.updated_at
        OR OLD.title_key IS DISTINCT FROM NEW.title_key
        OR OLD.description_key IS DISTINCT FROM NEW.description_key
        OR OLD.file_key IS DISTINCT FROM NEW.file_key
        OR OLD.category IS DISTINCT FROM NEW.category)
    EXECUTE FUNCTION findings_keys_trigger();
