package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

type auditRow struct {
	Field, Source       string
	From, To, Reason    *string
	ActorUser, ActorKey *string
}

func audit(t *testing.T, id string) []auditRow {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT field, source, from_value, to_value, reason, actor_user_id::text, actor_key_id
		FROM findings.audit_log WHERE finding_id = $1 ORDER BY id`, id)
	require.NoError(t, err)
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var a auditRow
		require.NoError(t, rows.Scan(&a.Field, &a.Source, &a.From, &a.To, &a.Reason, &a.ActorUser, &a.ActorKey))
		out = append(out, a)
	}
	return out
}

func get(t *testing.T, key, id string) map[string]any {
	t.Helper()
	r := do(t, "GET", "/findings/"+id, key, nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	return r.JSON()
}

func TestTriage(t *testing.T) {
	t.Parallel()

	t.Run("state and severity with reasons", func(t *testing.T) {
		t.Parallel()
		o := newOrg(t, "auto")
		scan := newScan(t, o, "https://git.example.com/acme/api")
		id := report(t, scan, fnd("a", "medium"))[0]
		before := get(t, o.ReadKey, id)

		r := do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"state": "true_positive", "severity": "critical", "reason": "confirmed"})
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m := r.JSON()
		require.Len(t, m, 4)
		require.Equal(t, map[string]any{"id": id, "state": "true_positive", "severity": "critical", "duplicate_of": nil}, m)

		after := get(t, o.ReadKey, id)
		require.NotEqual(t, before["updated_at"], after["updated_at"])
		require.Equal(t, before["found_at"], after["found_at"])
		thread := after["triage_thread"].([]any)
		require.Len(t, thread, 1)
		e := thread[0].(map[string]any)
		require.Equal(t, "true_positive", e["reaction"])
		require.Equal(t, "confirmed", e["comment"])
		require.Equal(t, "api", e["source"])
		require.Equal(t, o.UserID, e["user_id"])
		require.NotEmpty(t, e["username"])
		require.NotEmpty(t, e["timestamp"])

		a := audit(t, id)
		require.Len(t, a, 2)
		require.Equal(t, "state", a[0].Field)
		require.Equal(t, "open", *a[0].From)
		require.Equal(t, "true_positive", *a[0].To)
		require.Equal(t, "confirmed", *a[0].Reason)
		require.Equal(t, "api", a[0].Source)
		require.Equal(t, o.UserID, *a[0].ActorUser)
		require.Equal(t, o.WriteKeyID, *a[0].ActorKey)
		require.Equal(t, "severity", a[1].Field)
		require.Equal(t, "medium", *a[1].From)
		require.Equal(t, "critical", *a[1].To)

		// Specific reasons win over reason.
		r = do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"state": "accepted_risk", "severity": "low",
			"state_reason": "business decision", "severity_reason": "internal only", "reason": "ignored"})
		require.Equal(t, 200, r.Status, "%s", r.Body)
		a = audit(t, id)
		require.Len(t, a, 4)
		require.Equal(t, "business decision", *a[2].Reason)
		require.Equal(t, "internal only", *a[3].Reason)

		// Severity only: reaction null, comment the severity reason; updated_at moves.
		mid := get(t, o.ReadKey, id)
		time.Sleep(10 * time.Millisecond)
		r = do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"severity": "high", "reason": "re-rated"})
		require.Equal(t, 200, r.Status)
		after = get(t, o.ReadKey, id)
		require.NotEqual(t, mid["updated_at"], after["updated_at"])
		thread = after["triage_thread"].([]any)
		require.Len(t, thread, 3)
		last := thread[2].(map[string]any)
		require.Nil(t, last["reaction"])
		require.Equal(t, "re-rated", last["comment"])

		// No change (same values): updated_at stays, no audit record.
		r = do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"severity": "high"})
		require.Equal(t, 200, r.Status)
		require.Equal(t, after["updated_at"], get(t, o.ReadKey, id)["updated_at"])
		require.Len(t, audit(t, id), 5)
	})

	t.Run("validation", func(t *testing.T) {
		t.Parallel()
		o := newOrg(t, "auto")
		scan := newScan(t, o, "https://git.example.com/acme/api")
		id := report(t, scan, fnd("a", "medium"))[0]
		long := strings.Repeat("x", 2001)
		for body, msg := range map[string]string{
			`{}`:                                                  "At least one of state, severity, duplicate_of",
			`{"reason":"only a reason"}`:                          "At least one of state, severity, duplicate_of",
			`{"state":"closed"}`:                                  "state",
			`{"state":""}`:                                        "state",
			`{"severity":"urgent"}`:                               "severity",
			`{"duplicate_of":"nope"}`:                             "duplicate_of",
			`{"duplicate_of":5}`:                                  "duplicate_of",
			`{"state":"open","extra":1}`:                          "extra",
			`{"state":"open","reason":"` + long + `"}`:            "reason",
			`{"state":"open","state_reason":"` + long + `"}`:      "state_reason",
			`{"severity":"low","severity_reason":"` + long + `"}`: "severity_reason",
			`{"state":`:                                           "Malformed JSON",
		} {
			requireError(t, do(t, "PATCH", "/findings/"+id, o.WriteKey, body), 400, msg)
		}
		// Exactly 2000 characters is fine.
		r := do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"state": "open", "reason": strings.Repeat("y", 2000)})
		require.Equal(t, 200, r.Status, "%s", r.Body)
		// A read-only key may not patch.
		requireError(t, do(t, "PATCH", "/findings/"+id, o.ReadKey, map[string]any{"state": "resolved"}), 403, "write")
		requireError(t, do(t, "PATCH", "/findings/not-a-uuid", o.WriteKey, map[string]any{"state": "resolved"}), 400, "id")
	})

	t.Run("duplicates", func(t *testing.T) {
		t.Parallel()
		o := newOrg(t, "auto")
		scan := newScan(t, o, "https://git.example.com/acme/web")
		other := newScan(t, o, "https://git.example.com/acme/other")
		f := report(t, scan, fnd("a", "high"), fnd("b", "high"), fnd("c", "low"))
		a, b, c := f[0], f[1], f[2]
		elsewhere := report(t, other, fnd("x", "high"))[0]
		pendingF := fnd("p", "high")
		pendingF.Verified = false
		pending := report(t, scan, pendingF)[0]

		requireError(t, do(t, "PATCH", "/findings/"+b, o.WriteKey, map[string]any{"duplicate_of": b}), 400, "itself")
		requireError(t, do(t, "PATCH", "/findings/"+b, o.WriteKey, map[string]any{"duplicate_of": elsewhere}), 400, "same repository")
		requireError(t, do(t, "PATCH", "/findings/"+b, o.WriteKey, map[string]any{"duplicate_of": pending}), 400, "duplicate_of")
		requireError(t, do(t, "PATCH", "/findings/"+b, o.WriteKey, map[string]any{"duplicate_of": uuid.NewString()}), 400, "duplicate_of")
		requireError(t, do(t, "PATCH", "/findings/"+b, o.WriteKey, map[string]any{"duplicate_of": a, "state": "open"}), 400, "state")

		r := do(t, "PATCH", "/findings/"+b, o.WriteKey, map[string]any{"duplicate_of": a, "reason": "same sink"})
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, map[string]any{"id": b, "state": "resolved", "severity": "high", "duplicate_of": a}, r.JSON())
		require.Equal(t, a, get(t, o.ReadKey, b)["duplicate_of"])

		// A duplicate cannot be a canonical; a canonical cannot become a duplicate.
		requireError(t, do(t, "PATCH", "/findings/"+c, o.WriteKey, map[string]any{"duplicate_of": b}), 400, "duplicate")
		requireError(t, do(t, "PATCH", "/findings/"+a, o.WriteKey, map[string]any{"duplicate_of": c}), 400, "canonical")

		// Unmarking reopens.
		r = do(t, "PATCH", "/findings/"+b, o.WriteKey, `{"duplicate_of": null}`)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, map[string]any{"id": b, "state": "open", "severity": "high", "duplicate_of": nil}, r.JSON())
		fields := []string{}
		for _, x := range audit(t, b) {
			fields = append(fields, x.Field)
		}
		require.Equal(t, []string{"state", "duplicate_of", "state", "duplicate_of"}, fields)
		thread := get(t, o.ReadKey, b)["triage_thread"].([]any)
		require.Len(t, thread, 2)
		require.Equal(t, "resolved", thread[0].(map[string]any)["reaction"])
		require.Equal(t, "open", thread[1].(map[string]any)["reaction"])
	})

	t.Run("comments", func(t *testing.T) {
		t.Parallel()
		o := newOrg(t, "auto")
		scan := newScan(t, o, "https://git.example.com/acme/api")
		id := report(t, scan, fnd("a", "medium"))[0]
		r := do(t, "POST", "/findings/"+id+"/comments", o.WriteKey, map[string]any{"comment": "looking into it"})
		require.Equal(t, 201, r.Status, "%s", r.Body)
		cid := r.JSON()["comment_id"].(string)
		require.NoError(t, uuidParse(cid))
		thread := get(t, o.ReadKey, id)["triage_thread"].([]any)
		require.Len(t, thread, 1)
		e := thread[0].(map[string]any)
		require.Equal(t, cid, e["id"])
		require.Nil(t, e["reaction"])
		require.Equal(t, "looking into it", e["comment"])
		require.Equal(t, "api", e["source"])
		requireError(t, do(t, "POST", "/findings/"+id+"/comments", o.WriteKey, map[string]any{"comment": ""}), 400, "comment")
		requireError(t, do(t, "POST", "/findings/"+id+"/comments", o.WriteKey, map[string]any{"comment": strings.Repeat("z", 4001)}), 400, "comment")
		require.Equal(t, 201, do(t, "POST", "/findings/"+id+"/comments", o.WriteKey, map[string]any{"comment": strings.Repeat("z", 4000)}).Status)
		requireError(t, do(t, "POST", "/findings/"+id+"/comments", o.ReadKey, map[string]any{"comment": "x"}), 403, "write")
	})

	t.Run("occurrences and reopening", func(t *testing.T) {
		t.Parallel()
		o := newOrg(t, "auto")
		repo := "https://git.example.com/acme/svc"
		s1 := newScan(t, o, repo)
		f := report(t, s1, fnd("r", "high"), fnd("fp", "high"), fnd("same", "low"))
		resolved, falsePos, plain := f[0], f[1], f[2]
		require.Equal(t, 200, do(t, "PATCH", "/findings/"+resolved, o.WriteKey, map[string]any{"state": "resolved"}).Status)
		require.Equal(t, 200, do(t, "PATCH", "/findings/"+falsePos, o.WriteKey, map[string]any{"state": "false_positive"}).Status)

		// A second scan of the same repository (spelled differently) sees all three again.
		s2 := newScan(t, o, "https://GIT.example.com/acme/svc.git/")
		res, err := intake.ReportFindings(ctx(t), &findingsv1.ReportFindingsRequest{ScanId: s2,
			Findings: []*findingsv1.ReportedFinding{fnd("r", "high"), fnd("fp", "high"), fnd("same", "low")}})
		require.NoError(t, err)
		for i, want := range []string{resolved, falsePos, plain} {
			require.Equal(t, want, res.GetResults()[i].GetFindingId())
			require.False(t, res.GetResults()[i].GetCreated())
		}
		require.True(t, res.GetResults()[0].GetReopened())
		require.False(t, res.GetResults()[1].GetReopened())
		// Reporting again is idempotent.
		report(t, s2, fnd("r", "high"), fnd("fp", "high"), fnd("same", "low"))

		require.Equal(t, "open", get(t, o.ReadKey, resolved)["state"])
		require.Equal(t, "false_positive", get(t, o.ReadKey, falsePos)["state"])
		d := get(t, o.ReadKey, plain)
		require.EqualValues(t, 2, d["occurrence_count"])
		require.Equal(t, s1, d["scan_id"])
		last := audit(t, resolved)
		require.Equal(t, "agent", last[len(last)-1].Source)
		require.Equal(t, "open", *last[len(last)-1].To)

		// Both scans list all three; the total of the org counts each once.
		require.Equal(t, 3, list(t, o.ReadKey, "/scans/"+s1+"/findings").Total)
		require.Equal(t, 3, list(t, o.ReadKey, "/scans/"+s2+"/findings").Total)
		require.Equal(t, 3, list(t, o.ReadKey, "/findings?scan_id="+s2).Total)
		require.Equal(t, 3, list(t, o.ReadKey, "/findings").Total)
		require.Equal(t, 1, list(t, o.ReadKey, "/scans/"+s2+"/findings?state=false_positive").Total)

		sums, err := intake.GetScanSummaries(ctx(t), &findingsv1.GetScanSummariesRequest{ScanIds: []string{s2, s1}, OrgId: o.ID})
		require.NoError(t, err)
		require.Len(t, sums.GetSummaries(), 2)
		sum := sums.GetSummaries()[0]
		require.Equal(t, s2, sum.GetScanId())
		require.EqualValues(t, 2, sum.GetHigh())
		require.EqualValues(t, 1, sum.GetLow())
		other, err := intake.GetScanSummaries(ctx(t), &findingsv1.GetScanSummariesRequest{ScanIds: []string{s2}, OrgId: newOrg(t, "auto").ID})
		require.NoError(t, err)
		require.Zero(t, other.GetSummaries()[0].GetHigh(), "another organization's counts are never given")
	})

	t.Run("manual verification and vulnscanctl", func(t *testing.T) {
		t.Parallel()
		o := newOrg(t, "manual")
		scan := newScan(t, o, "https://git.example.com/acme/manual")
		f := report(t, scan, fnd("m1", "high"), fnd("m2", "low"))
		requireError(t, do(t, "GET", "/findings/"+f[0], o.ReadKey, nil), 404, "Finding not found")

		out, err := sys.Ctl("finding", "list", "--scan", scan)
		require.NoError(t, err)
		require.Empty(t, out["data"])
		out, err = sys.Ctl("finding", "list", "--scan", scan, "--include-unverified")
		require.NoError(t, err)
		data := out["data"].([]any)
		require.Len(t, data, 2)
		first := data[0].(map[string]any)
		require.Equal(t, f[0], first["id"])
		require.Equal(t, "pending", first["verification_status"])
		require.NotEmpty(t, first["title"])

		out, err = sys.Ctl("finding", "approve", "--id", f[0])
		require.NoError(t, err)
		require.Equal(t, map[string]any{"id": f[0], "verification_status": "approved"}, out)
		out, err = sys.Ctl("finding", "reject", "--id", f[1])
		require.NoError(t, err)
		require.Equal(t, map[string]any{"id": f[1], "verification_status": "rejected"}, out)
		require.Equal(t, 200, do(t, "GET", "/findings/"+f[0], o.ReadKey, nil).Status)
		requireError(t, do(t, "GET", "/findings/"+f[1], o.ReadKey, nil), 404, "Finding not found")
		_, err = sys.Ctl("finding", "approve", "--id", uuid.NewString())
		require.Error(t, err)
	})
}

func uuidParse(s string) error {
	_, err := uuid.Parse(s)
	return err
}
