-- A scan-filtered list walks the scan's occurrences, so each occurrence
-- carries copies of its finding's list keys: whether the finding is
-- approved, its severity rank, state, found_at and updated_at. Triggers keep
-- the copies equal to the finding in the changing transaction: an
-- occurrence takes them when inserted, and every change of the finding's
-- keys (triage, approval, reopening) is copied to all of its occurrences.
ALTER TABLE occurrences
    ADD COLUMN approved      boolean     NOT NULL DEFAULT false,
    ADD COLUMN severity_rank smallint    NOT NULL DEFAULT 0,
    ADD COLUMN state         text        NOT NULL DEFAULT 'open',
    ADD COLUMN found_at      timestamptz NOT NULL DEFAULT 'epoch',
    ADD COLUMN updated_at    timestamptz NOT NULL DEFAULT 'epoch';

UPDATE occurrences o SET approved = f.verification_status = 'approved', severity_rank = f.severity_rank, state = f.state,
    found_at = f.found_at, updated_at = f.updated_at
    FROM findings f WHERE f.id = o.finding_id;

ALTER TABLE occurrences
    ALTER COLUMN approved DROP DEFAULT,
    ALTER COLUMN severity_rank DROP DEFAULT,
    ALTER COLUMN state DROP DEFAULT,
    ALTER COLUMN found_at DROP DEFAULT,
    ALTER COLUMN updated_at DROP DEFAULT;

-- Scan-filtered lists filter severity by its rank, so the rank must always
-- be the severity's.
ALTER TABLE findings ADD CONSTRAINT findings_severity_rank_check CHECK (severity_rank = CASE severity
    WHEN 'critical' THEN 5 WHEN 'high' THEN 4 WHEN 'medium' THEN 3 WHEN 'low' THEN 2 ELSE 1 END);

-- Scan list indexes, the counterparts of the organization's: each serves a
-- filter combination with a sort key, ending in found_at, finding_id, so a
-- page of a scan — even a deep one — is an index-only scan in either
-- direction. A severity filter is an equality on the rank, so the rank
-- indexes serve both a severity sort and a severity filter.
CREATE INDEX occurrences_list_found ON occurrences (scan_id, found_at, finding_id) WHERE approved;
CREATE INDEX occurrences_list_updated ON occurrences (scan_id, updated_at, found_at, finding_id) WHERE approved;
CREATE INDEX occurrences_list_rank ON occurrences (scan_id, severity_rank, found_at, finding_id) WHERE approved;
CREATE INDEX occurrences_list_rank_updated ON occurrences (scan_id, severity_rank, updated_at, found_at, finding_id) WHERE approved;
CREATE INDEX occurrences_list_state_found ON occurrences (scan_id, state, found_at, finding_id) WHERE approved;
CREATE INDEX occurrences_list_state_updated ON occurrences (scan_id, state, updated_at, found_at, finding_id) WHERE approved;
CREATE INDEX occurrences_list_state_rank ON occurrences (scan_id, state, severity_rank, found_at, finding_id) WHERE approved;
CREATE INDEX occurrences_list_state_rank_updated ON occurrences (scan_id, state, severity_rank, updated_at, found_at, finding_id) WHERE approved;

CREATE FUNCTION occurrences_keys_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT f.verification_status = 'approved', f.severity_rank, f.state, f.found_at, f.updated_at
        INTO NEW.approved, NEW.severity_rank, NEW.state, NEW.found_at, NEW.updated_at
        FROM findings.findings f WHERE f.id = NEW.finding_id;
    RETURN NEW;
END $$;
CREATE TRIGGER occurrences_keys BEFORE INSERT OR UPDATE OF finding_id ON occurrences
    FOR EACH ROW EXECUTE FUNCTION occurrences_keys_trigger();

CREATE FUNCTION findings_keys_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE findings.occurrences SET approved = NEW.verification_status = 'approved', severity_rank = NEW.severity_rank,
        state = NEW.state, found_at = NEW.found_at, updated_at = NEW.updated_at
        WHERE finding_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_keys AFTER UPDATE OF verification_status, severity_rank, state, found_at, updated_at ON findings
    FOR EACH ROW WHEN (OLD.verification_status IS DISTINCT FROM NEW.verification_status
        OR OLD.severity_rank IS DISTINCT FROM NEW.severity_rank
        OR OLD.state IS DISTINCT FROM NEW.state
        OR OLD.found_at IS DISTINCT FROM NEW.found_at
        OR OLD.updated_at IS DISTINCT FROM NEW.updated_at)
    EXECUTE FUNCTION findings_keys_trigger();
