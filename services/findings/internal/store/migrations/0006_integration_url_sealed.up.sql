-- A chat incoming-webhook URL is itself a credential: it is kept sealed in
-- url_enc like tokens, and url holds only its redacted form for display.
-- Rows written before this migration are sealed by the service on start
-- (SealWebhookURLs); errors recorded for them may quote the URL and are
-- cleared here.
ALTER TABLE integrations ADD COLUMN url_enc bytea;

UPDATE outbox SET last_error = 'error text removed: it may have contained a webhook URL'
WHERE last_error IS NOT NULL
  AND integration_id IN (SELECT id FROM integrations WHERE kind = 'slack');
