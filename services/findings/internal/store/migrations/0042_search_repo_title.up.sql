-- migrate: without transaction
-- A title within a repository, in found_at and in update order.
--
-- Titles are few per organization (one per rule, or a few), so one title
-- holds a large share of the findings, and one repository a tenth of
-- those or fewer where the organization has ten repositories or more.
-- The title's indexes (0017, 0034) carry the repository, which a search
-- checks on each entry: at a million findings in ten repositories, page
-- 1,000 of q through one title (200,000 findings) with a repository read
-- about 50,000 of the title's entries to keep 5,000, 14 to 22 ms, where a
-- spec filter's page 1,000 reads about 15,000. These two hold each
-- repository's findings per title, so that such a page reads the index up
-- to the page alone, like a title with a state (0025, 0027).
--
-- No index in severity order: a search's page sorted by severity is found
-- within the severities it spans from the key counters (which count each
-- title per repository and severity), and within one severity it is the
-- found_at order, which the first index serves with the severity checked
-- on its entries. A rule's findings mostly share one severity.
--
-- Descriptions and paths are many, each key holding few findings in any
-- repository, and get no such index. Each index costs intake one more
-- entry per finding; see the README's list and intake figures. Built
-- concurrently, without blocking intake and triage.
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_repo_title ON findings (org_id, repo_key, title_key, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state, category) WHERE verification_status = 'approved';
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_repo_title_updated ON findings (org_id, repo_key, title_key, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state, category) WHERE verification_status = 'approved';
