-- Inbound events: the git host and the chat sign the events they send to an
-- integration's public endpoint with the integration's inbound secret,
-- sealed like its other credentials.
ALTER TABLE integrations ADD COLUMN inbound_secret_enc bytea;

-- Every inbound event accepted, by its delivery key (the git host's delivery
-- id, the chat's request signature), so that a replay changes nothing. Kept
-- 30 days.
CREATE TABLE inbound_receipts (
    integration_id uuid NOT NULL REFERENCES integrations (id),
    delivery_key   text NOT NULL,
    received_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (integration_id, delivery_key)
);

-- Who an integration's external users are: a git host login (lower case)
-- or a chat user id, mapped by the operator to a user of the organization.
CREATE TABLE integration_users (
    integration_id uuid NOT NULL REFERENCES integrations (id),
    external_user  text NOT NULL,
    user_id        uuid NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (integration_id, external_user)
);

-- What the integration created for a finding on the receiver's side (a git
-- host comment, "comment:<id>"), so that a reply or reaction to it finds
-- the finding.
CREATE TABLE integration_refs (
    integration_id uuid NOT NULL REFERENCES integrations (id),
    ref            text NOT NULL,
    finding_id     uuid NOT NULL REFERENCES findings (id),
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (integration_id, ref)
);
