-- Outbound webhooks: endpoints an organization registers through the API,
-- the events published to them, and one delivery per (webhook, event) with
-- its attempts. URLs and signing secrets are sealed with the service's key;
-- url_display is the URL without its query string.
CREATE TABLE webhooks (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL,
    url_display text NOT NULL,
    url_enc     bytea NOT NULL,
    secret_enc  bytea NOT NULL,
    events      text[] NOT NULL,
    description text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    removed_at  timestamptz
);
CREATE INDEX webhooks_org_idx ON webhooks (org_id, created_at, id) WHERE removed_at IS NULL;

-- An event is written once (in the transaction that caused it, or by
-- PublishEvent, idempotent by id) and fanned out to the subscribed webhooks.
CREATE TABLE webhook_events (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL,
    type        text NOT NULL,
    payload     jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY,
    webhook_id       uuid NOT NULL REFERENCES webhooks (id),
    event_id         uuid NOT NULL REFERENCES webhook_events (id),
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_status_code integer,
    last_error       text,
    last_attempt_at  timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    delivered_at     timestamptz,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
