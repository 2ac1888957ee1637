-- migrate: without transaction
-- The purge of expired uploads, which runs every hour.
--
-- It took the oldest uploads past the retention period by sorting every
-- upload past it, and looked each one up among the estimations'
-- repositories by URL, which no index held: each run read both tables
-- whole, growing with every upload and estimation ever made. It now reads
-- the uploads past the period in age order up to its batch, and each
-- upload's uses by their URL. Built concurrently, without blocking
-- uploads and estimations.
CREATE INDEX CONCURRENTLY IF NOT EXISTS uploads_created ON uploads (created_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS estimation_repos_url ON estimation_repos (repo_url);
