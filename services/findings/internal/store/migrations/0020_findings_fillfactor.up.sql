-- A finding seen again by a scan is updated in place: its occurrence count,
-- and at times its approval or state. With room left on its page, an update
-- that changes no indexed column is a heap-only tuple and writes none of
-- the findings' many list and search indexes; on a full page it writes an
-- entry into every one of them. Pages written from now on keep a fifth of
-- their space for such updates (existing pages keep theirs until rewritten).
ALTER TABLE findings SET (fillfactor = 80);
