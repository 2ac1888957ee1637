-- migrate: without transaction
-- An organization's scans in each order the list sorts by, and the scans a
-- sweep looks at.
--
-- The list (GET /v1/scans) sorts by created_at, updated_at or status, each
-- then by created_at and id, optionally of one status. Only created_at had
-- an index, so a page in update or status order, or of one status in any
-- order, read and sorted every started scan of the organization, which
-- grows by one per pull request; and the created_at index held ids in the
-- opposite direction to the page's order (created_at DESC, id), so a page
-- by created_at sorted each run of equal times. Each order now has its
-- index, read forwards or backwards, so a page reads its rows from the
-- index up to its end, and a status's total counts that status's entries
-- alone. A status list's entries in created_at order
-- also serve the status order (by status, then created_at), and the
-- running count a worker takes before it starts a scan; they replace the
-- (org_id, status) index.
--
-- The stranded-scan sweep looked for idle unfinished scans among every
-- scan of every organization; the unfinished ones are few and get a small
-- index of their own.
--
-- Built concurrently, without blocking scan starts and updates.
CREATE INDEX CONCURRENTLY IF NOT EXISTS scans_org_created_id_idx ON scans (org_id, created_at, id) WHERE start_state = 'started';
CREATE INDEX CONCURRENTLY IF NOT EXISTS scans_org_status_created_idx ON scans (org_id, status, created_at, id) WHERE start_state = 'started';
CREATE INDEX CONCURRENTLY IF NOT EXISTS scans_org_updated_idx ON scans (org_id, updated_at, created_at, id) WHERE start_state = 'started';
CREATE INDEX CONCURRENTLY IF NOT EXISTS scans_org_status_updated_idx ON scans (org_id, status, updated_at, created_at, id) WHERE start_state = 'started';
CREATE INDEX CONCURRENTLY IF NOT EXISTS scans_unfinished_updated_idx ON scans (updated_at) WHERE start_state = 'started' AND status IN ('pending', 'running');
DROP INDEX CONCURRENTLY IF EXISTS scans_org_created_idx;
DROP INDEX CONCURRENTLY IF EXISTS scans_org_status_idx;
