-- A found_at window sorted by severity or update time ranks the window's
-- matches: the organization's found_at index now carries those sort keys,
-- so that the ranking reads the index alone instead of every matching row.
DROP INDEX findings_list_found;
CREATE INDEX findings_list_found ON findings (org_id, found_at, id) INCLUDE (severity_rank, updated_at)
    WHERE verification_status = 'approved';
