-- migrate: without transaction
-- A description's or a path's findings in update order.
--
-- Their indexes (0017) hold found_at and severity order, with updated_at
-- carried along, so a search through them in update order read every
-- match of every key and sorted them: at a million findings, page 1,000 of
-- q matching 111 descriptions (22,000 findings) took about 21 ms and of a
-- file prefix matching 140 paths (20,000 findings) about 15 ms, against 2
-- to 4 ms for the spec's filters in that order. These hold each
-- description's and each path's findings in update order, so that each
-- key yields its findings up to the page's end in that order, cut at a
-- bound read from the keys themselves as in the other orders (see the
-- store's keyBound). Each costs intake one more entry per finding, and a
-- triage change one more entry per changed finding; see the README's list
-- and intake figures. They are built concurrently, without blocking the
-- intake's writes while they build.
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_description_updated ON findings (org_id, description_key, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state) WHERE verification_status = 'approved';
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_file_updated ON findings (org_id, file_key, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state) WHERE verification_status = 'approved';
