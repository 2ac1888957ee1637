package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/delivery"
)

// seedMany reports n findings of one new scan of org and returns the scan and the ids.
func seedMany(t *testing.T, org string, n int, severity string) (string, []string) {
	t.Helper()
	scanID := uuid.NewString()
	_, err := intake.RegisterScan(ctx(t), &findingsv1.RegisterScanRequest{ScanId: scanID, OrgId: org,
		RepoUrl: "https://github.example.com/acme/bulk-" + scanID[:8] + ".git", ScanType: "pr", CommitSha: "abc123", PullRequest: 9})
	require.NoError(t, err)
	var ids []string
	for start := 0; start < n; start += 100 {
		var fs []*findingsv1.ReportedFinding
		for i := start; i < min(start+100, n); i++ {
			fs = append(fs, fnd(fmt.Sprintf("bulk-%d", i), severity))
		}
		ids = append(ids, report(t, scanID, fs...)...)
	}
	require.Len(t, ids, n)
	return scanID, ids
}

func countAudit(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// TestBulkTriage: 1,000 findings change in one request with one audit
// record each under a shared batch id and one signed notification per
// integration; a foreign id among them changes nothing.
func TestBulkTriage(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	other := newOrg(t, "auto")
	scanID, all := seedMany(t, o.ID, 1001, "high")
	ids := all[:1000]
	_, foreign := seedMany(t, other.ID, 1, "high")
	chat := newReceiver(t, 0, nil)
	git := newReceiver(t, 0, nil)
	addIntegration(t, []string{"HOOK_SECRET=s3cret"}, "--org", o.ID, "--kind", "slack", "--url", chat.URL+"/hook", "--secret-env", "HOOK_SECRET")
	addIntegration(t, nil, "--org", o.ID, "--kind", "github", "--url", git.URL)

	t.Run("validation", func(t *testing.T) {
		tooMany := make([]string, 1001)
		for i := range tooMany {
			tooMany[i] = uuid.NewString()
		}
		tests := []struct {
			name string
			body map[string]any
			msg  string
		}{
			{"nothing selected", map[string]any{"state": "resolved"}, "ids (1 to 1000 finding ids) or filter is required"},
			{"both", map[string]any{"ids": ids[:1], "filter": map[string]any{"state": "open"}, "state": "resolved"}, "either ids or filter"},
			{"too many", map[string]any{"ids": tooMany, "state": "resolved"}, "at most 1000"},
			{"bad id", map[string]any{"ids": []string{ids[0], "nope"}, "state": "resolved"}, "ids[1] must be a valid UUID"},
			{"repeated id", map[string]any{"ids": []string{ids[0], ids[0]}, "state": "resolved"}, "ids[1] repeats ids[0]"},
			{"no change", map[string]any{"ids": ids[:1]}, "At least one of state, severity, duplicate_of"},
			{"bad state", map[string]any{"ids": ids[:1], "state": "gone"}, "state"},
			{"bad filter state", map[string]any{"filter": map[string]any{"state": "gone"}, "state": "resolved"}, "filter.state"},
			{"bad filter scan", map[string]any{"filter": map[string]any{"scan_id": "x"}, "state": "resolved"}, "filter.scan_id"},
			{"long reason", map[string]any{"ids": ids[:1], "state": "resolved", "reason": strings.Repeat("x", 2001)}, "reason"},
			{"unknown field", map[string]any{"ids": ids[:1], "state": "resolved", "force": true}, "force"},
			{"filter too wide", map[string]any{"filter": map[string]any{"scan_id": scanID}, "state": "resolved"}, "filter matches more than 1000 findings"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				requireError(t, do(t, "POST", "/findings/bulk", o.WriteKey, tc.body), 400, tc.msg)
			})
		}
		requireError(t, do(t, "POST", "/findings/bulk", o.ReadKey, map[string]any{"ids": ids[:1], "state": "resolved"}), 403, "write")
		requireError(t, do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"filter": map[string]any{"scan_id": uuid.NewString()}, "state": "resolved"}), 404, "Scan not found")
	})

	// One foreign id among 1,000: 404 naming it, nothing changed.
	withForeign := append(append([]string{}, ids[:999]...), foreign[0])
	requireError(t, do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"ids": withForeign, "state": "accepted_risk", "reason": "vendor fix pending"}), 404,
		"Finding not found: "+foreign[0])
	require.Zero(t, countAudit(t, `SELECT count(*) FROM findings.audit_log WHERE finding_id = ANY($1::uuid[])`, withForeign))
	require.Equal(t, 1001, list(t, o.ReadKey, "/findings?state=open&limit=1").Total)
	require.Equal(t, "open", get(t, other.ReadKey, foreign[0])["state"])

	// All 1,000 at once.
	r := do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"ids": ids, "state": "accepted_risk", "severity": "low", "reason": "vendor fix pending"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	res := r.JSON()
	require.EqualValues(t, 1000, res["matched"])
	require.EqualValues(t, 1000, res["changed"])
	require.EqualValues(t, 0, res["unchanged"])
	batch := res["batch_id"].(string)
	require.NoError(t, uuidParse(batch))
	require.Equal(t, 1000, list(t, o.ReadKey, "/findings?state=accepted_risk&severity=low&limit=1").Total)
	require.Equal(t, 2000, countAudit(t, `SELECT count(*) FROM findings.audit_log WHERE batch_id = $1`, batch), "one record per changed field of each finding")
	require.Equal(t, 1000, countAudit(t, `SELECT count(DISTINCT finding_id) FROM findings.audit_log WHERE batch_id = $1 AND field = 'state' AND to_value = 'accepted_risk'
		AND reason = 'vendor fix pending' AND source = 'api' AND actor_key_id IS NOT NULL`, batch))
	f := get(t, o.ReadKey, ids[500])
	thread := f["triage_thread"].([]any)
	require.Equal(t, "accepted_risk", thread[len(thread)-1].(map[string]any)["reaction"])

	// Each integration got one notification for the batch, signed where configured.
	require.Equal(t, 2, countAudit(t, `SELECT count(*) FROM findings.outbox WHERE batch_id = $1`, batch), "one event per integration for the batch")
	require.Zero(t, countAudit(t, `SELECT count(*) FROM findings.outbox WHERE finding_id = ANY($1::uuid[])`, ids), "no event per finding")
	require.Eventually(t, func() bool {
		return countAudit(t, `SELECT count(*) FROM findings.outbox WHERE batch_id = $1 AND status = 'delivered'`, batch) == 2
	}, 30*time.Second, 50*time.Millisecond)
	require.Len(t, chat.got(), 1)
	require.Len(t, git.got(), 1)
	c := chat.got()[0]
	require.Equal(t, "finding.bulk_updated", c.Header.Get("X-Vulnscan-Event"))
	require.Equal(t, "sha256="+delivery.Sign("s3cret", c.Header.Get("X-Vulnscan-Timestamp"), c.Body), c.Header.Get("X-Vulnscan-Signature"))
	var msg struct {
		Text  string `json:"text"`
		Event struct {
			BatchID  string           `json:"batch_id"`
			Findings []map[string]any `json:"findings"`
		} `json:"event"`
	}
	require.NoError(t, json.Unmarshal(c.Body, &msg))
	require.Equal(t, batch, msg.Event.BatchID)
	require.Len(t, msg.Event.Findings, 1000)
	require.Contains(t, msg.Text, "1000 findings changed in one batch")
	require.Contains(t, msg.Text, "vendor fix pending")
	require.Equal(t, "/repos/acme/bulk-"+scanID[:8]+"/issues/9/comments", git.got()[0].Path)

	// The same change again changes nothing and notifies nobody.
	r = do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"filter": map[string]any{"state": "accepted_risk", "severity": "low"}, "state": "accepted_risk"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.EqualValues(t, 1000, r.JSON()["matched"])
	require.EqualValues(t, 0, r.JSON()["changed"])
	require.EqualValues(t, 1000, r.JSON()["unchanged"])

	// A filter selects a subset: a narrower change by filter.
	require.Equal(t, 200, do(t, "PATCH", "/findings/"+ids[0], o.WriteKey, map[string]any{"severity": "critical"}).Status)
	r = do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"filter": map[string]any{"severity": "critical", "scan_id": scanID}, "state": "true_positive"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.EqualValues(t, 1, r.JSON()["changed"])
	require.Equal(t, "true_positive", get(t, o.ReadKey, ids[0])["state"])
	require.Equal(t, "accepted_risk", get(t, o.ReadKey, ids[1])["state"])
	require.Equal(t, "open", get(t, o.ReadKey, all[1000])["state"], "a finding not selected stays as it was")
}
