-- Rebuild the tag search counters (0038) from the tag rows.
--
-- 0038 redefined the tag counters' trigger function and backfilled
-- finding_tag_search_counts from the tag rows in one transaction, without
-- locking the tag rows: a report that wrote tag rows under the former
-- function (which wrote finding_tag_counts alone) and committed after the
-- backfill's snapshot left its tag rows out of the new counters, so a
-- database upgraded while findings arrived could hold totals short by
-- those findings. Here the tag rows are locked against writes (waiting for
-- the reports under way, every later one runs the current function) and
-- the counters against the fold, and the counters are rebuilt: about 1 s
-- at a million findings, during which reports wait.
LOCK TABLE finding_tags IN SHARE MODE;
LOCK TABLE finding_tag_search_counts IN EXCLUSIVE MODE;

DELETE FROM finding_tag_search_counts;
INSERT INTO finding_tag_search_counts (org_id, tag, repo_key, category, severity_rank, state, n, pending)
    SELECT org_id, tag, repo_key, category, severity_rank, state, count(*), false FROM finding_tags WHERE approved
    GROUP BY 1, 2, 3, 4, 5, 6;
