-- migrate: without transaction
-- migrate: with extensions pg_trgm, btree_gin
-- q's trigram indexes, led by the organization.
--
-- q looks up an organization's matching texts and paths (see the store's
-- textKeys). The trigram indexes of 0023 span every organization: a word
-- common in the texts of all of them yielded every organization's
-- matches, intersected with the organization's range of the primary key,
-- so that a lookup grew with the number of tenants (40 organizations of
-- 10,000 texts and 10,000 paths each: a search for a word in a third of
-- the texts 28 ms, against 19 ms through these indexes; a rare word 2.0
-- against 0.7 ms). These hold the organization beside the
-- trigrams (btree_gin), and a lookup reads only its own organization's
-- entries. Built concurrently, without blocking intake; the old indexes
-- go once these serve. While btree_gin (or pg_trgm) is missing, this
-- migration is skipped and tried again at each start, and the old indexes
-- serve.
CREATE INDEX CONCURRENTLY IF NOT EXISTS search_texts_org_trgm ON search_texts USING gin (org_id, folded gin_trgm_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS search_files_org_trgm ON search_files USING gin (org_id, folded gin_trgm_ops);
DROP INDEX CONCURRENTLY IF EXISTS search_texts_trgm;
DROP INDEX CONCURRENTLY IF EXISTS search_files_trgm;
