-- migrate: without transaction
-- A tag's index entries carry the search keys its rows copy (0045), so
-- that a tag's page and total with q or a file prefix read the tag's index
-- alone. Each index is rebuilt as in 0036: concurrently under a temporary
-- name, which then takes the old one's.
CREATE INDEX CONCURRENTLY IF NOT EXISTS finding_tags_found_next ON finding_tags (org_id, tag, found_at, finding_id)
    INCLUDE (severity_rank, state, updated_at, category, repo_key, title_key, description_key, file_key) WHERE approved;
DROP INDEX CONCURRENTLY IF EXISTS finding_tags_found;
ALTER INDEX IF EXISTS finding_tags_found_next RENAME TO finding_tags_found;
CREATE INDEX CONCURRENTLY IF NOT EXISTS finding_tags_rank_next ON finding_tags (org_id, tag, severity_rank, found_at, finding_id)
    INCLUDE (state, updated_at, category, repo_key, title_key, description_key, file_key) WHERE approved;
DROP INDEX CONCURRENTLY IF EXISTS finding_tags_rank;
ALTER INDEX IF EXISTS finding_tags_rank_next RENAME TO finding_tags_rank;
CREATE INDEX CONCURRENTLY IF NOT EXISTS finding_tags_updated_next ON finding_tags (org_id, tag, updated_at, found_at, finding_id)
    INCLUDE (severity_rank, state, category, repo_key, title_key, description_key, file_key) WHERE approved;
DROP INDEX CONCURRENTLY IF EXISTS finding_tags_updated;
ALTER INDEX IF EXISTS finding_tags_updated_next RENAME TO finding_tags_updated;
