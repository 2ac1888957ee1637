-- q and file prefix searches within a scan read the scan's occurrences.
--
-- A scan holds far fewer findings than its organization, but a search
-- within it used to walk the scan's occurrences in list order and look up
-- each one's finding to compare its keys (0017), or read every finding of
-- the organization matching the keys and look up its occurrence: either way
-- a row visited per finding of the scan or of the organization, not per
-- match. Each occurrence now carries copies of its finding's key columns
-- (title_key, description_key, file_key), as it carries the list keys
-- (0002), and one index per key column holds a scan's approved occurrences
-- of a key in severity order, then found_at: a search within a scan reads
-- the matching keys' entries alone, stopping at the page, and counts them
-- without visiting a finding.
--
-- Findings' texts are written once, when reported, but a change of a title,
-- a description or an affected file (by an operator or a migration) is
-- copied like a change of a list key.
ALTER TABLE occurrences
    ADD COLUMN title_key       uuid,
    ADD COLUMN description_key uuid,
    ADD COLUMN file_key        uuid;

UPDATE occurrences o SET title_key = f.title_key, description_key = f.description_key, file_key = f.file_key
    FROM findings f WHERE f.id = o.finding_id;

ALTER TABLE occurrences
    ALTER COLUMN title_key SET NOT NULL,
    ALTER COLUMN description_key SET NOT NULL,
    ALTER COLUMN file_key SET NOT NULL;

CREATE OR REPLACE FUNCTION occurrences_keys_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT f.verification_status = 'approved', f.severity_rank, f.state, f.found_at, f.updated_at,
            f.title_key, f.description_key, f.file_key
        INTO NEW.approved, NEW.severity_rank, NEW.state, NEW.found_at, NEW.updated_at,
            NEW.title_key, NEW.description_key, NEW.file_key
        FROM findings.findings f WHERE f.id = NEW.finding_id;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION findings_keys_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE findings.occurrences SET approved = NEW.verification_status = 'approved', severity_rank = NEW.severity_rank,
        state = NEW.state, found_at = NEW.found_at, updated_at = NEW.updated_at,
        title_key = NEW.title_key, description_key = NEW.description_key, file_key = NEW.file_key
        WHERE finding_id = NEW.id;
    RETURN NULL;
END $$;

DROP TRIGGER findings_keys ON findings;
CREATE TRIGGER findings_keys AFTER UPDATE OF verification_status, severity_rank, state, found_at, updated_at,
        title, description, affected_file ON findings
    FOR EACH ROW WHEN (OLD.verification_status IS DISTINCT FROM NEW.verification_status
        OR OLD.severity_rank IS DISTINCT FROM NEW.severity_rank
        OR OLD.state IS DISTINCT FROM NEW.state
        OR OLD.found_at IS DISTINCT FROM NEW.found_at
        OR OLD.updated_at IS DISTINCT FROM NEW.updated_at
        OR OLD.title_key IS DISTINCT FROM NEW.title_key
        OR OLD.description_key IS DISTINCT FROM NEW.description_key
        OR OLD.file_key IS DISTINCT FROM NEW.file_key)
    EXECUTE FUNCTION findings_keys_trigger();

-- A scan's approved occurrences of a key, by severity rank then found_at,
-- carrying the other list keys: a page in severity order reads a key's
-- entries in order; in found_at order, each severity's entries in order.
CREATE INDEX occurrences_search_title ON occurrences (scan_id, title_key, severity_rank, found_at, finding_id)
    INCLUDE (updated_at, state) WHERE approved;
CREATE INDEX occurrences_search_description ON occurrences (scan_id, description_key, severity_rank, found_at, finding_id)
    INCLUDE (updated_at, state) WHERE approved;
CREATE INDEX occurrences_search_file ON occurrences (scan_id, file_key, severity_rank, found_at, finding_id)
    INCLUDE (updated_at, state) WHERE approved;
