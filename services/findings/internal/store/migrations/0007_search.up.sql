-- Search filters of the finding lists: repository, category, tag, file
-- prefix, found_at window and free text. Like the list indexes of 0001,
-- every index is partial on approved findings and, where it can, ends in
-- found_at, id so that the default sort reads a page straight from it.
--
-- A found_at window uses findings_list_found (org_id, found_at, id).
CREATE INDEX findings_search_repo ON findings (org_id, repo_key, found_at, id) WHERE verification_status = 'approved';
CREATE INDEX findings_search_category ON findings (org_id, category, found_at, id) WHERE verification_status = 'approved';
-- A tag is an array containment (tags @> ARRAY[tag]).
CREATE INDEX findings_search_tags ON findings USING gin (tags) WHERE verification_status = 'approved';
-- A file prefix is a byte-order range on the path, so the index compares in
-- the "C" collation whatever the database's default is.
CREATE INDEX findings_search_file ON findings (org_id, (affected_file COLLATE "C"), found_at, id) WHERE verification_status = 'approved';

-- Free text (q) is a case-insensitive substring match over title,
-- description and file, joined by newlines (q never holds one, so a match
-- never spans two fields). A trigram index serves it when the pg_trgm
-- extension exists. pg_trgm is a trusted extension: the database's owner or
-- a superuser may create it, a service role that may only use its own
-- schema may not. ProvisionRoles creates it in the public schema when it
-- provisions the service roles; a database where it cannot be created
-- still answers q, by scanning the organization's findings.
DO $$
DECLARE
    ns text;
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
    EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
        RAISE NOTICE 'pg_trgm unavailable (%): free-text search runs without a trigram index', SQLERRM;
    END;
    SELECT n.nspname INTO ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    IF ns IS NOT NULL THEN
        EXECUTE format($i$CREATE INDEX findings_search_text ON findings.findings
            USING gin ((title || E'\n' || description || E'\n' || affected_file) %I.gin_trgm_ops)
            WHERE verification_status = 'approved'$i$, ns);
    END IF;
END $$;
