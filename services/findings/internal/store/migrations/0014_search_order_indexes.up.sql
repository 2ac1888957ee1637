-- Repository and category pages in each list order.
--
-- The indexes of 0008 held a repository's or a category's findings in
-- found_at order only: a severity-sorted page sorted every match, and a
-- page with another filter (a state, the other of the two) fetched every
-- row to check it. Each filter now has one index per order of its own
-- (found_at, and severity rank then found_at), and every index carries the
-- columns the other filters and sorts compare, so that a page with any
-- combination of repository, category, severity and state is read from one
-- index alone, in order, stopping at the page.
DROP INDEX findings_search_repo;
DROP INDEX findings_search_category;
CREATE INDEX findings_search_repo ON findings (org_id, repo_key, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state, category) WHERE verification_status = 'approved';
CREATE INDEX findings_search_repo_rank ON findings (org_id, repo_key, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state, category) WHERE verification_status = 'approved';
CREATE INDEX findings_search_category ON findings (org_id, category, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state, repo_key) WHERE verification_status = 'approved';
CREATE INDEX findings_search_category_rank ON findings (org_id, category, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state, repo_key) WHERE verification_status = 'approved';
