-- migrate: without transaction
-- A scan's findings that are not approved (held for review or rejected).
--
-- A scan's summary counts its findings by verification status. Its
-- approved findings are counted by the counters (finding_counts); the
-- others are found through this index, which holds only them, and looked
-- up one by one (see the store's verificationCountsSQL). Approved findings,
-- almost all of a scan's, add no entry, so intake of approved findings
-- pays nothing for it. Built concurrently, without blocking intake.
CREATE INDEX CONCURRENTLY IF NOT EXISTS occurrences_unapproved ON occurrences (scan_id) WHERE NOT approved;
