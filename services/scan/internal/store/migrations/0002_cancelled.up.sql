-- A scan can be cancelled while pending or running; cancelled is terminal.
ALTER TABLE scans DROP CONSTRAINT scans_status_check;
ALTER TABLE scans ADD CONSTRAINT scans_status_check CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled'));
