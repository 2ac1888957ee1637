-- Scans that reported (or are about to report) findings. The scan service
-- registers each scan when it starts.
CREATE TABLE scans (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL,
    repo_url     text NOT NULL,
    repo_key     text NOT NULL,
    scan_type    text NOT NULL CHECK (scan_type IN ('full', 'pr')),
    commit_sha   text NOT NULL DEFAULT '',
    pull_request integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scans_org_idx ON scans (org_id);

-- A finding is identified within a repository by its fingerprint. scan_id
-- is the scan that first found it; occurrences list every scan that saw it.
CREATE TABLE findings (
    id                  uuid PRIMARY KEY,
    org_id              uuid NOT NULL,
    repo_key            text NOT NULL,
    fingerprint         text NOT NULL,
    scan_id             uuid NOT NULL REFERENCES scans (id),
    title               text NOT NULL,
    category            text NOT NULL,
    severity            text NOT NULL CHECK (severity IN ('critical', 'high', 'medium', 'low', 'info')),
    -- severity_rank orders severities: info 1 … critical 5.
    severity_rank       smallint NOT NULL,
    state               text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'true_positive', 'false_positive', 'accepted_risk', 'resolved')),
    description         text NOT NULL DEFAULT '',
    affected_file       text NOT NULL DEFAULT '',
    affected_code       text NOT NULL DEFAULT '',
    proof_of_concept    text,
    tags                text[] NOT NULL DEFAULT '{}',
    mermaid_trace       text,
    start_line          integer NOT NULL DEFAULT 0,
    end_line            integer NOT NULL DEFAULT 0,
    verification_status text NOT NULL DEFAULT 'pending' CHECK (verification_status IN ('pending', 'approved', 'rejected')),
    duplicate_of        uuid REFERENCES findings (id),
    occurrence_count    integer NOT NULL DEFAULT 1,
    found_at            timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, repo_key, fingerprint)
);

-- List indexes. Only approved findings are ever listed, so every index is
-- partial. Each one serves one filter combination (none, severity, state,
-- both) with one sort key, ending in found_at, id (the tie-breakers), so a
-- page — even a deep one — is an index-only scan in either direction.
CREATE INDEX findings_list_found ON findings (org_id, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_updated ON findings (org_id, updated_at, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_rank ON findings (org_id, severity_rank, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_sev_found ON findings (org_id, severity, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_sev_updated ON findings (org_id, severity, updated_at, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_state_found ON findings (org_id, state, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_state_updated ON findings (org_id, state, updated_at, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_state_rank ON findings (org_id, state, severity_rank, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_sev_state_found ON findings (org_id, severity, state, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_list_sev_state_updated ON findings (org_id, severity, state, updated_at, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_scan_idx ON findings (scan_id);
CREATE INDEX findings_duplicate_of_idx ON findings (duplicate_of) WHERE duplicate_of IS NOT NULL;

CREATE TABLE occurrences (
    scan_id    uuid NOT NULL REFERENCES scans (id),
    finding_id uuid NOT NULL REFERENCES findings (id),
    seen_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scan_id, finding_id)
);
CREATE INDEX occurrences_finding_idx ON occurrences (finding_id);

-- finding_counts keeps exact totals of approved findings per organization
-- (scan_id is the nil UUID) and per scan, by severity and state, so that a
-- list's total is a sum over at most 25 rows. Triggers keep it in step with
-- every change, in the changing transaction.
CREATE TABLE finding_counts (
    org_id   uuid NOT NULL,
    scan_id  uuid NOT NULL,
    severity text NOT NULL,
    state    text NOT NULL,
    n        bigint NOT NULL,
    PRIMARY KEY (org_id, scan_id, severity, state)
);

CREATE FUNCTION bump_count(p_org uuid, p_scan uuid, p_sev text, p_state text, p_delta bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n) VALUES (p_org, p_scan, p_sev, p_state, p_delta)
    ON CONFLICT (org_id, scan_id, severity, state) DO UPDATE SET n = finding_counts.n + EXCLUDED.n;
$$;

CREATE FUNCTION findings_count_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s uuid;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.verification_status = 'approved' THEN
        PERFORM findings.bump_count(OLD.org_id, '00000000-0000-0000-0000-000000000000'::uuid, OLD.severity, OLD.state, -1);
        FOR s IN SELECT scan_id FROM findings.occurrences WHERE finding_id = OLD.id LOOP
            PERFORM findings.bump_count(OLD.org_id, s, OLD.severity, OLD.state, -1);
        END LOOP;
    END IF;
    IF NEW.verification_status = 'approved' THEN
        PERFORM findings.bump_count(NEW.org_id, '00000000-0000-0000-0000-000000000000'::uuid, NEW.severity, NEW.state, 1);
        FOR s IN SELECT scan_id FROM findings.occurrences WHERE finding_id = NEW.id LOOP
            PERFORM findings.bump_count(NEW.org_id, s, NEW.severity, NEW.state, 1);
        END LOOP;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_count AFTER INSERT OR UPDATE OF severity, state, verification_status ON findings
    FOR EACH ROW EXECUTE FUNCTION findings_count_trigger();

CREATE FUNCTION occurrences_count_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    f record;
BEGIN
    SELECT org_id, severity, state, verification_status INTO f FROM findings.findings WHERE id = NEW.finding_id;
    IF f.verification_status = 'approved' THEN
        PERFORM findings.bump_count(f.org_id, NEW.scan_id, f.severity, f.state, 1);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER occurrences_count AFTER INSERT ON occurrences
    FOR EACH ROW EXECUTE FUNCTION occurrences_count_trigger();

-- The triage thread: comments and reactions from every source.
CREATE TABLE triage_entries (
    id         uuid PRIMARY KEY,
    finding_id uuid NOT NULL REFERENCES findings (id),
    reaction   text,
    comment    text,
    user_id    uuid NOT NULL,
    username   text NOT NULL,
    source     text NOT NULL CHECK (source IN ('github', 'slack', 'web', 'api', 'agent')),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX triage_entries_finding_idx ON triage_entries (finding_id, created_at, id);

-- The audit trail is append-only: one row per changed field.
CREATE TABLE audit_log (
    id            bigserial PRIMARY KEY,
    finding_id    uuid NOT NULL REFERENCES findings (id),
    org_id        uuid NOT NULL,
    field         text NOT NULL,
    from_value    text,
    to_value      text,
    reason        text,
    actor_user_id uuid,
    actor_key_id  text,
    source        text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_finding_idx ON audit_log (finding_id, id);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

-- Outbound integrations of an organization. Tokens and signing secrets are
-- sealed with the service's secret key.
CREATE TABLE integrations (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('github', 'slack', 'jira', 'linear')),
    name       text NOT NULL,
    url        text NOT NULL,
    project    text NOT NULL DEFAULT '',
    token_enc  bytea,
    secret_enc bytea,
    created_at timestamptz NOT NULL DEFAULT now(),
    removed_at timestamptz
);
CREATE INDEX integrations_org_idx ON integrations (org_id) WHERE removed_at IS NULL;

-- The outbox: one event per integration per change, written in the
-- changing transaction and delivered at least once by the delivery worker.
CREATE TABLE outbox (
    id              bigserial PRIMARY KEY,
    org_id          uuid NOT NULL,
    integration_id  uuid NOT NULL REFERENCES integrations (id),
    finding_id      uuid NOT NULL REFERENCES findings (id),
    event           text NOT NULL,
    payload         jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz
);
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at, id) WHERE status = 'pending';

-- External issues created by the issue tracker integrations, so that later
-- events comment on the same issue.
CREATE TABLE integration_links (
    integration_id uuid NOT NULL REFERENCES integrations (id),
    finding_id     uuid NOT NULL REFERENCES findings (id),
    external_id    text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (integration_id, finding_id)
);
CREATE INDEX outbox_order_idx ON outbox (integration_id, finding_id, id) WHERE status = 'pending';
