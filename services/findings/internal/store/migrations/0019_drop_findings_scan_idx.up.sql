-- No query looks findings up by the scan that first found them: a scan's
-- findings are read through its occurrences, and a finding's scan is read
-- by joining the scan to the finding. Scans are never deleted, so the
-- foreign key needs no index either. Every new finding wrote an entry here
-- for nothing.
DROP INDEX findings_scan_idx;
