-- The tag rows and the occurrences name their finding without a foreign
-- key. A foreign key is checked row by row, with a lookup and a row lock on
-- the finding, and intake writes two tag rows and an occurrence for every
-- finding it receives: the checks were about a tenth of a batch's cost.
-- Neither can name a finding that does not exist: tag rows are written only
-- by the findings' own triggers (0013), from the rows being inserted or
-- updated; occurrences only by intake, for the ids it has just inserted or
-- locked in the same transaction; and findings are never deleted. The
-- occurrences keep their foreign key to scans, checked once per scan row.
ALTER TABLE finding_tags DROP CONSTRAINT finding_tags_finding_id_fkey;
ALTER TABLE occurrences DROP CONSTRAINT occurrences_finding_id_fkey;
