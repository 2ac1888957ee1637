-- A key created through the API by another key records that parent: the
-- child never outlives it and is revoked with it, transitively.
ALTER TABLE api_keys ADD COLUMN parent_id uuid REFERENCES api_keys (id);
CREATE INDEX api_keys_parent_idx ON api_keys (parent_id) WHERE parent_id IS NOT NULL;

-- Revocations to announce to the gateways' caches (Redis tombstone and
-- pub/sub), written in the transaction that revokes and deleted once
-- published, so that a revocation commits whether or not Redis answers.
CREATE TABLE revocation_outbox (
    id         bigserial PRIMARY KEY,
    key_hash   text NOT NULL,
    attempts   integer NOT NULL DEFAULT 0,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now()
);
