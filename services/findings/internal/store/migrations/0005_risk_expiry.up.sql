-- A risk acceptance may end: at risk_expires_at the finding reopens.
ALTER TABLE findings ADD COLUMN risk_expires_at timestamptz;
CREATE INDEX findings_risk_expiry_idx ON findings (risk_expires_at) WHERE state = 'accepted_risk' AND risk_expires_at IS NOT NULL;
