-- A repository, a category or a title in update order.
--
-- Their indexes (0014, 0015, 0017) hold found_at and severity order, with
-- updated_at carried along: a page in update order read every match and
-- sorted them, so page 1,000 of a repository's 100,000 findings took
-- about 70 ms at a million findings, against about 2 ms for the spec's
-- filters in that order (findings_list_updated). These hold each
-- repository's, category's and title's findings in update order, carrying
-- the other filters' columns, so that such a page reads the index up to the
-- page alone. Descriptions and paths, each key holding few findings, keep
-- sorting their keys' matches. Each index costs intake one more entry per
-- finding, and a triage change one more entry per changed finding; see the
-- README's list and intake figures.
CREATE INDEX findings_search_repo_updated ON findings (org_id, repo_key, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state, category) WHERE verification_status = 'approved';
CREATE INDEX findings_search_category_updated ON findings (org_id, category, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state, repo_key) WHERE verification_status = 'approved';
CREATE INDEX findings_search_title_updated ON findings (org_id, title_key, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state) WHERE verification_status = 'approved';
