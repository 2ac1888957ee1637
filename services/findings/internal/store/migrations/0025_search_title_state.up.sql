-- A title with a state, in found_at or severity order.
--
-- Titles are few per organization (one per rule, or a few), so one title
-- key holds a large share of the findings, and a state a fifth of those or
-- fewer: reading the title's index (0017) and skipping the other states'
-- entries read about 75,000 entries for page 1,000 of one title's open
-- findings at a million findings, where a spec filter's page 1,000 reads
-- about 15,000. These two hold each title's findings per state, in the
-- orders the title's own indexes hold, so that such a page reads the
-- index up to the page alone.
--
-- Descriptions and paths are many, each key holding few findings, and get
-- no such index: their keys' pages stay short with the state checked on
-- the key's index entries. Each index here costs intake one more entry per
-- finding; see the README's list and intake figures.
CREATE INDEX findings_search_title_state ON findings (org_id, title_key, state, found_at, id)
    INCLUDE (severity_rank, updated_at, severity) WHERE verification_status = 'approved';
CREATE INDEX findings_search_title_state_rank ON findings (org_id, title_key, state, severity_rank, found_at, id)
    INCLUDE (updated_at, severity) WHERE verification_status = 'approved';
