-- migrate: without transaction
-- A scan's approved occurrences of a title, in update order.
--
-- A search within a scan through one key reads the page from that key's
-- occurrence index when the index holds the page's order (see the store's
-- scanKeyPage). The indexes of 0020 hold a key's occurrences by severity
-- rank then found_at, so a page in update order sorted every occurrence of
-- the key: titles are few (one per rule) and one title holds a large share
-- of a scan's findings (20,000 of a rescan's 100,000 in the list
-- benchmark, whose page 1,000 in update order took 9.2 ms, 4.5 ms through
-- this index). Descriptions and paths each hold few findings and keep
-- sorting theirs. Built concurrently, without blocking intake.
CREATE INDEX CONCURRENTLY IF NOT EXISTS occurrences_search_title_updated ON occurrences (scan_id, title_key, updated_at, found_at, finding_id)
    INCLUDE (severity_rank, state) WHERE approved;
