-- migrate: without transaction
-- The organization's list indexes carry each finding's search keys.
--
-- A q or file prefix whose keys are many and match much of the list may
-- find its page by walking the list in order and testing each entry's
-- keys (see searchKeys.walk) rather than by reading each key's index. The
-- walk read the finding row of every entry it passed, so it was priced
-- high and rarely taken: at a million findings, page 1,000 of q over 1,111
-- descriptions (222,200 findings) was read key by key, some 33,000
-- entries sorted, 26 ms by found_at and 41 ms in update order. With the
-- three key columns in the entries the walk reads the index alone (about
-- 67,000 entries there, 15 and 11 to 18 ms). The entries grow by 48
-- bytes each. A walk under a state, a repository or a category, or under
-- a severity in update order, still reads each row (these indexes carry
-- none of them), and is priced so.
--
-- Each index is built anew under a temporary name, concurrently so that
-- intake and triage go on, then takes the old one's name. Run again after
-- a failure part way, the file rebuilds at most one index twice and ends
-- in the same state.
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_list_found_next ON findings (org_id, found_at, id)
    INCLUDE (severity_rank, updated_at, title_key, description_key, file_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_list_found;
ALTER INDEX IF EXISTS findings_list_found_next RENAME TO findings_list_found;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_list_rank_next ON findings (org_id, severity_rank, found_at, id)
    INCLUDE (title_key, description_key, file_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_list_rank;
ALTER INDEX IF EXISTS findings_list_rank_next RENAME TO findings_list_rank;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_list_updated_next ON findings (org_id, updated_at, found_at, id)
    INCLUDE (title_key, description_key, file_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_list_updated;
ALTER INDEX IF EXISTS findings_list_updated_next RENAME TO findings_list_updated;
