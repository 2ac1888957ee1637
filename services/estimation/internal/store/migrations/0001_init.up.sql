CREATE TABLE uploads (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL,
    user_id      uuid NOT NULL,
    content_type text NOT NULL,
    size_bytes   bigint NOT NULL,
    sha256       text NOT NULL,
    content_hash text NOT NULL,
    blob_key     text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX uploads_org ON uploads (org_id, created_at DESC);

CREATE TABLE estimations (
    id                 uuid PRIMARY KEY,
    org_id             uuid NOT NULL,
    user_id            uuid NOT NULL,
    name               text NOT NULL,
    task_id            text NOT NULL DEFAULT '',
    status             text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'partial', 'failed')),
    total_credits      integer NOT NULL DEFAULT 0,
    claimed_by_scan_id uuid,
    claimed_at         timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX estimations_org_recent ON estimations (org_id, created_at DESC, id DESC);

CREATE TABLE estimation_repos (
    estimation_id    uuid NOT NULL REFERENCES estimations (id) ON DELETE CASCADE,
    position         integer NOT NULL,
    source           text NOT NULL CHECK (source IN ('connected', 'public', 'upload')),
    repo_url         text NOT NULL,
    requested_branch text NOT NULL DEFAULT '',
    branch           text NOT NULL DEFAULT '',
    commit_sha       text NOT NULL DEFAULT '',
    clone_url        text NOT NULL DEFAULT '',
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'failed')),
    from_cache       boolean NOT NULL DEFAULT false,
    credits          integer NOT NULL DEFAULT 0,
    applications     jsonb NOT NULL DEFAULT '[]',
    error            text NOT NULL DEFAULT '',
    PRIMARY KEY (estimation_id, position)
);

-- Detection results by repository and commit, shared by every estimation
-- of the same commit. The commit is always resolved with the caller's own
-- access before the cache is read.
CREATE TABLE detection_cache (
    repo_key     text NOT NULL,
    commit_sha   text NOT NULL,
    result       jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_key, commit_sha)
);
