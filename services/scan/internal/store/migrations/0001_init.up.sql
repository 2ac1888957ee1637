CREATE TABLE scans (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL,
    user_id               uuid NOT NULL,
    task_id               text NOT NULL,
    status                text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    -- start_state tracks the start saga (claim, debit, queue) across services:
    -- only 'started' scans exist for the API; 'aborting' and 'aborted' ones
    -- were undone (claim released, credits refunded).
    start_state           text NOT NULL DEFAULT 'starting' CHECK (start_state IN ('starting', 'started', 'aborting', 'aborted')),
    scan_type             text NOT NULL DEFAULT 'full',
    cost_estimation_id    uuid NOT NULL,
    repos                 jsonb NOT NULL,
    target_urls           text[] NOT NULL DEFAULT '{}',
    auth_instructions_enc bytea,
    custom_context        text NOT NULL DEFAULT '',
    context_document_ids  uuid[] NOT NULL DEFAULT '{}',
    credits               integer NOT NULL,
    progress              integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    error                 text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    started_at            timestamptz,
    completed_at          timestamptz
);
CREATE INDEX scans_org_created_idx ON scans (org_id, created_at DESC, id) WHERE start_state = 'started';
CREATE INDEX scans_org_status_idx ON scans (org_id, status) WHERE start_state = 'started';

CREATE TABLE context_documents (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL,
    name       text NOT NULL,
    content    text NOT NULL,
    size       integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX context_documents_org_idx ON context_documents (org_id, created_at DESC);
