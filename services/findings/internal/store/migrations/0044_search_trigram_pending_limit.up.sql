-- migrate: without transaction
-- migrate: with extensions pg_trgm, btree_gin
-- A bound on the trigram indexes' pending lists.
--
-- The texts' and paths' trigram indexes (0030) take new entries into a
-- pending list, merged into the index when the list passes its limit or
-- when the table is vacuumed. Every q search that reads the index scans the
-- whole list, every tenant's new texts included, and the planner prices a
-- long list so high that a custom plan then checks every one of the
-- organization's texts instead. With the server's default limit (4 MB,
-- about 450 pages after 6,000 new descriptions of another organization),
-- q over 111 descriptions at a million findings took 7.2 to 8.4 ms against
-- 5.6 to 6.9 ms once the list was merged. At 512 kB a list holds at most
-- 64 pages; the texts arrive at about the same cost, merged eight times as
-- often in smaller steps (see the README). It needs the indexes of 0030,
-- and so their extensions: while one is missing, it is skipped with 0030
-- and runs after it at a later start.
ALTER INDEX search_texts_org_trgm SET (gin_pending_list_limit = 512);
ALTER INDEX search_files_org_trgm SET (gin_pending_list_limit = 512);
