-- q matches its texts and paths case-insensitively. body ILIKE pattern is,
-- in a multibyte encoding, lower(body) LIKE lower(pattern): PostgreSQL
-- lowered every text at every search, which was most of resolving a q that
-- matches thousands of texts. The distinct texts and paths now keep their
-- lowered form, and q is matched against it with LIKE and the lowered
-- pattern: the same matches, each text lowered once, when it first
-- appears. The trigram indexes move to the lowered form.
ALTER TABLE search_texts ADD COLUMN folded text GENERATED ALWAYS AS (lower(body)) STORED;
ALTER TABLE search_files ADD COLUMN folded text GENERATED ALWAYS AS (lower(path)) STORED;

DROP INDEX IF EXISTS search_texts_trgm;
DROP INDEX IF EXISTS search_files_trgm;
DO $$
DECLARE
    ns text;
BEGIN
    SELECT n.nspname INTO ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    IF ns IS NOT NULL THEN
        EXECUTE format('CREATE INDEX search_texts_trgm ON findings.search_texts USING gin (folded %I.gin_trgm_ops)', ns);
        EXECUTE format('CREATE INDEX search_files_trgm ON findings.search_files USING gin (folded %I.gin_trgm_ops)', ns);
    END IF;
END $$;
