-- Bulk triage: the audit records of one bulk change share a batch id, and
-- an integration receives one outbox event per scan for the whole batch
-- (finding_id is null on such an event; batch_id names the batch).
ALTER TABLE audit_log ADD COLUMN batch_id uuid;
ALTER TABLE outbox ALTER COLUMN finding_id DROP NOT NULL;
ALTER TABLE outbox ADD COLUMN batch_id uuid;
ALTER TABLE outbox ADD CONSTRAINT outbox_finding_or_batch CHECK (finding_id IS NOT NULL OR batch_id IS NOT NULL);
