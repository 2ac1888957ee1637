-- Exact totals of the repository and category filters without counting
-- the matches.
--
-- finding_search_counts keeps, like finding_counts (0003), delta rows of
-- approved findings per organization, repository, category, severity and
-- state: a change appends rows and never updates one, FoldCounts sums each
-- key's pending rows into one. A list filtered by repository and/or
-- category (with or without severity and state, without other search
-- filters) takes its total as a sum over at most a few hundred rows.
CREATE TABLE finding_search_counts (
    org_id   uuid NOT NULL,
    repo_key text NOT NULL,
    category text NOT NULL,
    severity text NOT NULL,
    state    text NOT NULL,
    n        bigint NOT NULL,
    pending  boolean NOT NULL DEFAULT true
);
CREATE INDEX finding_search_counts_repo_idx ON finding_search_counts (org_id, repo_key, category, severity, state) INCLUDE (n);
CREATE INDEX finding_search_counts_category_idx ON finding_search_counts (org_id, category, severity, state) INCLUDE (n);
CREATE INDEX finding_search_counts_pending_idx ON finding_search_counts (org_id, repo_key, category, severity, state) WHERE pending;

CREATE FUNCTION findings_search_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_search_counts (org_id, repo_key, category, severity, state, n)
        SELECT org_id, repo_key, category, severity, state, count(*)
        FROM new_rows WHERE verification_status = 'approved' GROUP BY org_id, repo_key, category, severity, state;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_search_count_insert AFTER INSERT ON findings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION findings_search_count_insert();

-- A finding whose key or approval changed leaves its old key and joins its
-- new one. Keys whose deltas cancel out get no row.
CREATE FUNCTION findings_search_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH changed AS (
        SELECT o.org_id AS old_org, o.repo_key AS old_repo, o.category AS old_cat, o.severity AS old_sev, o.state AS old_state,
               o.verification_status = 'approved' AS old_on,
               n.org_id AS new_org, n.repo_key AS new_repo, n.category AS new_cat, n.severity AS new_sev, n.state AS new_state,
               n.verification_status = 'approved' AS new_on
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.org_id, o.repo_key, o.category, o.severity, o.state, o.verification_status)
            IS DISTINCT FROM (n.org_id, n.repo_key, n.category, n.severity, n.state, n.verification_status)
    ), deltas AS (
        SELECT old_org AS org_id, old_repo AS repo_key, old_cat AS category, old_sev AS severity, old_state AS state, -1 AS d
            FROM changed WHERE old_on
        UNION ALL
        SELECT new_org, new_repo, new_cat, new_sev, new_state, 1 FROM changed WHERE new_on
    )
    INSERT INTO findings.finding_search_counts (org_id, repo_key, category, severity, state, n)
        SELECT org_id, repo_key, category, severity, state, sum(d) FROM deltas
        GROUP BY org_id, repo_key, category, severity, state HAVING sum(d) <> 0;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_search_count_update AFTER UPDATE ON findings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION findings_search_count_update();

-- The findings present when the triggers start counting. Creating the
-- triggers locked out writers until this transaction commits, so the sums
-- and the triggers' deltas never overlap.
INSERT INTO finding_search_counts (org_id, repo_key, category, severity, state, n, pending)
    SELECT org_id, repo_key, category, severity, state, count(*), false FROM findings
    WHERE verification_status = 'approved' GROUP BY org_id, repo_key, category, severity, state;

-- Exact totals of found_at windows without counting every match.
--
-- finding_hour_counts keeps delta rows of approved findings per
-- organization, hour of found_at (UTC), severity and state. A window's
-- total (with or without severity and state, without other search filters)
-- is the sum of the whole hours inside it plus a count of the matches in
-- the parts of an hour at either end, which the list indexes serve.
CREATE TABLE finding_hour_counts (
    org_id   uuid NOT NULL,
    hour     timestamptz NOT NULL,
    severity text NOT NULL,
    state    text NOT NULL,
    n        bigint NOT NULL,
    pending  boolean NOT NULL DEFAULT true
);
CREATE INDEX finding_hour_counts_key_idx ON finding_hour_counts (org_id, hour, severity, state) INCLUDE (n);
CREATE INDEX finding_hour_counts_pending_idx ON finding_hour_counts (org_id, hour, severity, state) WHERE pending;

CREATE FUNCTION findings_hour_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO findings.finding_hour_counts (org_id, hour, severity, state, n)
        SELECT org_id, date_trunc('hour', found_at, 'UTC'), severity, state, count(*)
        FROM new_rows WHERE verification_status = 'approved' GROUP BY 1, 2, 3, 4;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_hour_count_insert AFTER INSERT ON findings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION findings_hour_count_insert();

CREATE FUNCTION findings_hour_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH changed AS (
        SELECT o.org_id AS old_org, date_trunc('hour', o.found_at, 'UTC') AS old_hour, o.severity AS old_sev, o.state AS old_state,
               o.verification_status = 'approved' AS old_on,
               n.org_id AS new_org, date_trunc('hour', n.found_at, 'UTC') AS new_hour, n.severity AS new_sev, n.state AS new_state,
               n.verification_status = 'approved' AS new_on
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.org_id, o.found_at, o.severity, o.state, o.verification_status)
            IS DISTINCT FROM (n.org_id, n.found_at, n.severity, n.state, n.verification_status)
    ), deltas AS (
        SELECT old_org AS org_id, old_hour AS hour, old_sev AS severity, old_state AS state, -1 AS d FROM changed WHERE old_on
        UNION ALL
        SELECT new_org, new_hour, new_sev, new_state, 1 FROM changed WHERE new_on
    )
    INSERT INTO findings.finding_hour_counts (org_id, hour, severity, state, n)
        SELECT org_id, hour, severity, state, sum(d) FROM deltas
        GROUP BY org_id, hour, severity, state HAVING sum(d) <> 0;
    RETURN NULL;
END $$;
CREATE TRIGGER findings_hour_count_update AFTER UPDATE ON findings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION findings_hour_count_update();

INSERT INTO finding_hour_counts (org_id, hour, severity, state, n, pending)
    SELECT org_id, date_trunc('hour', found_at, 'UTC'), severity, state, count(*), false FROM findings
    WHERE verification_status = 'approved' GROUP BY 1, 2, 3, 4;
