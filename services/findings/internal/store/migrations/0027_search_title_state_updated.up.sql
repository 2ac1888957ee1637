-- migrate: without transaction
-- A title with a state, in update order.
--
-- 0025 holds each title's findings per state in found_at and severity
-- order, and 0026 each title's findings in update order. A page of one
-- title's findings with a state in update order read the latter and
-- skipped the other states' entries, or read the former and sorted every
-- match: page 1,000 of one title's 40,000 open findings took 10 to 28 ms at
-- a million findings (the sort of 15,000 of them in the second plan),
-- against 2 to 4 ms for the spec's filters in that order. This one holds
-- each title's findings per state in update order, so that the page reads
-- the index up to the page alone. Like the others, it costs intake one
-- more entry per finding, and a triage change one more entry per changed
-- finding; see the README's list and intake figures. It is built
-- concurrently, without blocking the intake's writes while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_title_state_updated ON findings (org_id, title_key, state, updated_at, found_at, id)
    INCLUDE (severity_rank, severity) WHERE verification_status = 'approved';
