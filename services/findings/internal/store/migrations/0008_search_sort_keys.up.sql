-- The repository and category search indexes also carry the other sort
-- keys (severity_rank, updated_at), so that a page sorted by them and the
-- exact total are read from the index alone, without visiting the matching
-- rows (a repository's deepest severity-sorted page otherwise reads every
-- matching row).
DROP INDEX findings_search_repo;
DROP INDEX findings_search_category;
CREATE INDEX findings_search_repo ON findings (org_id, repo_key, found_at, id) INCLUDE (severity_rank, updated_at)
    WHERE verification_status = 'approved';
CREATE INDEX findings_search_category ON findings (org_id, category, found_at, id) INCLUDE (severity_rank, updated_at)
    WHERE verification_status = 'approved';
