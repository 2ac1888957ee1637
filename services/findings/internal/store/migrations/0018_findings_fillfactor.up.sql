-- A finding seen again by a scan is updated in place: its occurrence count,
-- and at times its approval or state. With room left on its page, an update
-- that changes no indexed column is a heap-only tuple and writes none of
-- the findings' many list and search indexes; on a full page it writes an
-- entry into every one of them. Repositories are scanned again and again,
-- and each scan updates every finding it sees, so pages keep two fifths of
-- their space: enough for a new version of most rows of a page, whose
-- previous versions the page prunes before the next scan needs the room.
-- Pages written from now on keep it; existing ones when rewritten.
ALTER TABLE findings SET (fillfactor = 60);
