-- migrate: without transaction
-- A scan's approved occurrences of a category (copied by 0032), by
-- severity rank then found_at, carrying the other list keys: a scan's
-- total with a category counts its entries, and a page reads them, without
-- visiting a finding. Built concurrently, without blocking intake.
CREATE INDEX CONCURRENTLY IF NOT EXISTS occurrences_search_category ON occurrences (scan_id, category, severity_rank, found_at, finding_id)
    INCLUDE (updated_at, state) WHERE approved;
