CREATE TABLE organizations (
    id                uuid PRIMARY KEY,
    name              text NOT NULL UNIQUE,
    verification_mode text NOT NULL DEFAULT 'auto' CHECK (verification_mode IN ('auto', 'manual')),
    created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES organizations (id),
    username   text NOT NULL,
    role       text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'member')),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, username)
);

CREATE TABLE api_keys (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES organizations (id),
    user_id    uuid NOT NULL REFERENCES users (id),
    name       text NOT NULL,
    prefix     text NOT NULL,
    key_hash   text NOT NULL UNIQUE,
    scopes     text[] NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_org_idx ON api_keys (org_id, created_at DESC);

CREATE TABLE credit_balances (
    org_id     uuid PRIMARY KEY REFERENCES organizations (id),
    balance    integer NOT NULL CHECK (balance >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The ledger is append-only: every change of a balance is one row, and a
-- reference (e.g. scan:<id>) makes debits and refunds idempotent.
CREATE TABLE credit_ledger (
    id            bigserial PRIMARY KEY,
    org_id        uuid NOT NULL REFERENCES organizations (id),
    kind          text NOT NULL CHECK (kind IN ('grant', 'debit', 'refund')),
    delta         integer NOT NULL,
    balance_after integer NOT NULL,
    reference     text,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX credit_ledger_reference_idx ON credit_ledger (org_id, kind, reference) WHERE reference IS NOT NULL;

CREATE FUNCTION credit_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'credit_ledger is append-only';
END $$;
CREATE TRIGGER credit_ledger_append_only BEFORE UPDATE OR DELETE ON credit_ledger
    FOR EACH ROW EXECUTE FUNCTION credit_ledger_append_only();

CREATE TABLE connected_repos (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES organizations (id),
    url            text NOT NULL,
    url_key        text NOT NULL,
    clone_url      text NOT NULL,
    default_branch text NOT NULL DEFAULT '',
    token_enc      bytea,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, url_key)
);
