-- Pull request (PR) entries: an estimation repository may name a base
-- branch (and optionally a base commit on it). The job resolves the base
-- commit and sizes the change from it to the head commit.
ALTER TABLE estimation_repos
    ADD COLUMN base_branch           text NOT NULL DEFAULT '',
    ADD COLUMN requested_base_commit text NOT NULL DEFAULT '',
    ADD COLUMN base_commit           text NOT NULL DEFAULT '',
    ADD COLUMN pull_request          integer NOT NULL DEFAULT 0,
    ADD COLUMN changed_files         integer NOT NULL DEFAULT 0,
    ADD COLUMN changed_lines         integer NOT NULL DEFAULT 0;
