-- migrate: without transaction
-- The key indexes carry each finding's category and repository.
--
-- q and a file prefix are read through the indexes of their keys (0017,
-- 0025–0028), which carried the list keys, the severity and the state, so
-- that those filters are checked on the index entries. A category or a
-- repository with them was checked on each entry's finding: at a million
-- findings, a file prefix of 20,000 findings with a category took 100 to
-- 230 ms and with a repository 180 to 290 ms, q through one title (200,000
-- findings) with a repository 90 to 150 ms, the finding rows read one by
-- one. With both columns in the entries, those searches read the key
-- indexes alone. The entries grow by the category's and the repository's
-- bytes (about 40 % at a million findings with URLs of 35 characters); see
-- the README for the intake and search figures.
--
-- Each index is built anew under a temporary name, concurrently so that
-- intake and triage go on, then takes the old one's name. Run again after
-- a failure part way, the file rebuilds at most one index twice and ends
-- in the same state.
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_title_next ON findings (org_id, title_key, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_title;
ALTER INDEX IF EXISTS findings_search_title_next RENAME TO findings_search_title;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_title_rank_next ON findings (org_id, title_key, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_title_rank;
ALTER INDEX IF EXISTS findings_search_title_rank_next RENAME TO findings_search_title_rank;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_title_updated_next ON findings (org_id, title_key, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_title_updated;
ALTER INDEX IF EXISTS findings_search_title_updated_next RENAME TO findings_search_title_updated;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_title_state_next ON findings (org_id, title_key, state, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_title_state;
ALTER INDEX IF EXISTS findings_search_title_state_next RENAME TO findings_search_title_state;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_title_state_rank_next ON findings (org_id, title_key, state, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_title_state_rank;
ALTER INDEX IF EXISTS findings_search_title_state_rank_next RENAME TO findings_search_title_state_rank;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_title_state_updated_next ON findings (org_id, title_key, state, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_title_state_updated;
ALTER INDEX IF EXISTS findings_search_title_state_updated_next RENAME TO findings_search_title_state_updated;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_description_next ON findings (org_id, description_key, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_description;
ALTER INDEX IF EXISTS findings_search_description_next RENAME TO findings_search_description;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_description_rank_next ON findings (org_id, description_key, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_description_rank;
ALTER INDEX IF EXISTS findings_search_description_rank_next RENAME TO findings_search_description_rank;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_description_updated_next ON findings (org_id, description_key, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_description_updated;
ALTER INDEX IF EXISTS findings_search_description_updated_next RENAME TO findings_search_description_updated;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_file_next ON findings (org_id, file_key, found_at, id)
    INCLUDE (severity_rank, updated_at, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_file;
ALTER INDEX IF EXISTS findings_search_file_next RENAME TO findings_search_file;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_file_rank_next ON findings (org_id, file_key, severity_rank, found_at, id)
    INCLUDE (updated_at, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_file_rank;
ALTER INDEX IF EXISTS findings_search_file_rank_next RENAME TO findings_search_file_rank;
CREATE INDEX CONCURRENTLY IF NOT EXISTS findings_search_file_updated_next ON findings (org_id, file_key, updated_at, found_at, id)
    INCLUDE (severity_rank, severity, state, category, repo_key) WHERE verification_status = 'approved';
DROP INDEX CONCURRENTLY IF EXISTS findings_search_file_updated;
ALTER INDEX IF EXISTS findings_search_file_updated_next RENAME TO findings_search_file_updated;
