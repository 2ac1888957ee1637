-- Pull request scans: when a scan has reported all its findings the scan
-- service completes it here (completed_at, once). Completing a PR scan
-- queues its review comments and one summary per git hosting integration;
-- a summary belongs to the scan (scan_id), not to one finding.
ALTER TABLE scans ADD COLUMN completed_at timestamptz;
ALTER TABLE outbox ADD COLUMN scan_id uuid;
ALTER TABLE outbox DROP CONSTRAINT outbox_finding_or_batch;
ALTER TABLE outbox ADD CONSTRAINT outbox_finding_batch_or_scan CHECK (finding_id IS NOT NULL OR batch_id IS NOT NULL OR scan_id IS NOT NULL);
