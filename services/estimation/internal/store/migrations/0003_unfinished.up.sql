-- migrate: without transaction
-- The unfinished estimations, which a start and a sweep look for.
--
-- A start under the organization's running limit counted the running
-- estimations among every estimation the organization ever made, and the
-- stranded-estimation sweep looked for idle unfinished ones among every
-- estimation of every organization. Unfinished estimations are few: each
-- look now reads those alone. Built concurrently, without blocking new
-- estimations.
CREATE INDEX CONCURRENTLY IF NOT EXISTS estimations_org_running ON estimations (org_id) WHERE status = 'running';
CREATE INDEX CONCURRENTLY IF NOT EXISTS estimations_unfinished_updated ON estimations (updated_at) WHERE status IN ('pending', 'running');
