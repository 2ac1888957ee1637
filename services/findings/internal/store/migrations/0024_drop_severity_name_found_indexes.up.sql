-- A severity filter in found_at (or severity) order reads the rank indexes:
-- findings_list_rank (org_id, severity_rank, found_at, id) and
-- findings_list_state_rank (org_id, state, severity_rank, found_at, id)
-- yield the same pages as these two, the rank standing for the severity one
-- for one, so every finding no longer goes into them on intake. The update
-- order keeps its indexes on the severity name (findings_list_sev_updated,
-- findings_list_sev_state_updated): no rank index holds that order.
-- Replicas of the previous release still serving during a rolling deploy
-- filter by the severity name and read those pages without an index until
-- they are replaced (about 20 ms for page 1,000 at a million findings).
DROP INDEX findings_list_sev_found;
DROP INDEX findings_list_sev_state_found;
