package e2e

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// seeded is an organization with one scan of 20 approved findings (found
// in 4 batches, so found_at has ties), one pending and one rejected.
type seeded struct {
	org               struct{ key, readKey, id string }
	scan              string
	all               []string // approved, by report order
	sev               map[string]string
	batch             map[string]int
	pending, rejected string
}

var severities = []string{"critical", "high", "medium", "low", "info"}

func seed(t *testing.T) seeded {
	t.Helper()
	o := newOrg(t, "auto")
	s := seeded{sev: map[string]string{}, batch: map[string]int{}}
	s.org.key, s.org.readKey, s.org.id = o.WriteKey, o.ReadKey, o.ID
	s.scan = newScan(t, o, "https://git.example.com/acme/shop")
	for b := 0; b < 4; b++ {
		var fs []*findingsv1.ReportedFinding
		for i := 0; i < 5; i++ {
			fs = append(fs, fnd(fmt.Sprintf("fp-%d-%d", b, i), severities[(b+i)%5]))
		}
		got := report(t, s.scan, fs...)
		for i, id := range got {
			s.all = append(s.all, id)
			s.sev[id] = fs[i].Severity
			s.batch[id] = b
		}
		time.Sleep(5 * time.Millisecond)
	}
	unv := fnd("unverified", "critical")
	unv.Verified = false
	s.pending = report(t, s.scan, unv)[0]
	rej := fnd("rejected", "critical")
	rej.Verified = false
	s.rejected = report(t, s.scan, rej)[0]
	_, err := intake.RejectFinding(ctx(t), &findingsv1.RejectFindingRequest{Id: s.rejected})
	require.NoError(t, err)
	return s
}

func rank(sev string) int { return 5 - slices.Index(severities, sev) }

// expected orders ids as the API must: by key, then found_at (batch), then id.
func expected(s seeded, idsIn []string, key func(string) int, desc bool) []string {
	out := slices.Clone(idsIn)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ka, kb := key(a), key(b)
		if ka != kb {
			return (ka < kb) != desc
		}
		if s.batch[a] != s.batch[b] {
			return (s.batch[a] < s.batch[b]) != desc
		}
		return (a < b) != desc
	})
	return out
}

func TestLists(t *testing.T) {
	t.Parallel()
	s := seed(t)
	zero := func(string) int { return 0 }

	t.Run("defaults", func(t *testing.T) {
		t.Parallel()
		l := list(t, s.org.readKey, "/findings")
		require.Equal(t, 20, l.Total)
		require.Equal(t, 1, l.Page)
		require.Equal(t, 15, l.Limit)
		require.Equal(t, expected(s, s.all, zero, true)[:15], ids(l))
		f := l.Data[0]
		for _, k := range []string{"id", "title", "category", "severity", "state", "description", "affected_file", "affected_code",
			"proof_of_concept", "tags", "scan_id", "found_at", "updated_at"} {
			require.Contains(t, f, k)
		}
		require.Nil(t, f["proof_of_concept"])
		require.Equal(t, "open", f["state"])
		require.Equal(t, s.scan, f["scan_id"])
	})

	t.Run("pages never overlap or skip", func(t *testing.T) {
		t.Parallel()
		for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
			for _, order := range []string{"ASC", "DESC"} {
				var got []string
				for page := 1; ; page++ {
					l := list(t, s.org.key, fmt.Sprintf("/scans/%s/findings?sort_by=%s&sort_order=%s&limit=3&page=%d", s.scan, sortBy, order, page))
					require.Equal(t, 20, l.Total)
					require.Equal(t, page, l.Page)
					require.Equal(t, 3, l.Limit)
					got = append(got, ids(l)...)
					if page*3 >= l.Total {
						break
					}
				}
				key := zero
				if sortBy == "severity" {
					key = func(id string) int { return rank(s.sev[id]) }
				}
				require.Equal(t, expected(s, s.all, key, order == "DESC"), got, "%s %s", sortBy, order)
			}
		}
	})

	t.Run("filters combine with AND", func(t *testing.T) {
		t.Parallel()
		for _, sev := range severities {
			l := list(t, s.org.key, "/findings?limit=100&severity="+sev)
			var want []string
			for _, id := range s.all {
				if s.sev[id] == sev {
					want = append(want, id)
				}
			}
			require.Equal(t, len(want), l.Total)
			require.ElementsMatch(t, want, ids(l))
		}
		l := list(t, s.org.key, "/findings?state=resolved")
		require.Equal(t, 0, l.Total)
		require.Empty(t, l.Data)
		l = list(t, s.org.key, "/findings?state=open&severity=high&scan_id="+s.scan)
		require.Equal(t, 4, l.Total)
	})

	t.Run("unverified and rejected findings do not exist", func(t *testing.T) {
		t.Parallel()
		l := list(t, s.org.key, "/findings?limit=100")
		require.NotContains(t, ids(l), s.pending)
		require.NotContains(t, ids(l), s.rejected)
		for _, id := range []string{s.pending, s.rejected, uuid.NewString()} {
			requireError(t, do(t, "GET", "/findings/"+id, s.org.key, nil), 404, "Finding not found")
			requireError(t, do(t, "PATCH", "/findings/"+id, s.org.key, map[string]any{"state": "resolved"}), 404, "Finding not found")
		}
	})

	t.Run("approval makes a finding appear, rejection hides it", func(t *testing.T) {
		t.Parallel()
		o := newOrg(t, "auto")
		scan := newScan(t, o, "https://git.example.com/acme/other")
		f := fnd("later", "high")
		f.Verified = false
		id := report(t, scan, f)[0]
		requireError(t, do(t, "GET", "/findings/"+id, o.ReadKey, nil), 404, "Finding not found")
		require.Equal(t, 0, list(t, o.ReadKey, "/scans/"+scan+"/findings").Total)
		_, err := intake.ApproveFinding(ctx(t), &findingsv1.ApproveFindingRequest{Id: id})
		require.NoError(t, err)
		require.Equal(t, 200, do(t, "GET", "/findings/"+id, o.ReadKey, nil).Status)
		require.Equal(t, 1, list(t, o.ReadKey, "/scans/"+scan+"/findings").Total)
		require.Equal(t, 1, list(t, o.ReadKey, "/findings?severity=high").Total)
		_, err = intake.RejectFinding(ctx(t), &findingsv1.RejectFindingRequest{Id: id})
		require.NoError(t, err)
		requireError(t, do(t, "GET", "/findings/"+id, o.ReadKey, nil), 404, "Finding not found")
		require.Equal(t, 0, list(t, o.ReadKey, "/findings").Total)
	})

	t.Run("scans", func(t *testing.T) {
		t.Parallel()
		o := newOrg(t, "auto")
		empty := newScan(t, o, "https://git.example.com/acme/empty")
		l := list(t, o.ReadKey, "/scans/"+empty+"/findings")
		require.Equal(t, 0, l.Total)
		require.NotNil(t, l.Data)
		l = list(t, o.ReadKey, "/findings?scan_id="+empty)
		require.Equal(t, 0, l.Total)
		// Another organization's scan and an unknown one do not exist.
		requireError(t, do(t, "GET", "/scans/"+s.scan+"/findings", o.ReadKey, nil), 404, "Scan not found")
		requireError(t, do(t, "GET", "/findings?scan_id="+s.scan, o.ReadKey, nil), 404, "Scan not found")
		requireError(t, do(t, "GET", "/scans/"+uuid.NewString()+"/findings", o.ReadKey, nil), 404, "Scan not found")
		// Nor do its findings.
		requireError(t, do(t, "GET", "/findings/"+s.all[0], o.ReadKey, nil), 404, "Finding not found")
		requireError(t, do(t, "PATCH", "/findings/"+s.all[0], o.WriteKey, map[string]any{"state": "resolved"}), 404, "Finding not found")
		requireError(t, do(t, "POST", "/findings/"+s.all[0]+"/comments", o.WriteKey, map[string]any{"comment": "x"}), 404, "Finding not found")
		require.Equal(t, 0, list(t, o.ReadKey, "/findings").Total)
	})

	t.Run("invalid parameters", func(t *testing.T) {
		t.Parallel()
		for q, field := range map[string]string{
			"limit=0": "limit", "limit=101": "limit", "limit=-1": "limit", "limit=abc": "limit", "page=0": "page", "page=-3": "page",
			"severity=urgent": "severity", "state=closed": "state", "sort_by=title": "sort_by", "sort_order=UP": "sort_order",
			"scan_id=nope": "scan_id",
		} {
			requireError(t, do(t, "GET", "/findings?"+q, s.org.key, nil), 400, field)
		}
		requireError(t, do(t, "GET", "/scans/not-a-uuid/findings", s.org.key, nil), 400, "id")
		requireError(t, do(t, "GET", "/findings/not-a-uuid", s.org.key, nil), 400, "id")
		l := list(t, s.org.key, "/findings?limit=100&page=1")
		require.Len(t, l.Data, 20)
		l = list(t, s.org.key, "/findings?limit=100&page=2")
		require.Empty(t, l.Data)
		require.Equal(t, 20, l.Total)
	})

	t.Run("single read", func(t *testing.T) {
		t.Parallel()
		r := do(t, "GET", "/findings/"+s.all[3], s.org.readKey, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m := r.JSON()
		require.Equal(t, s.all[3], m["id"])
		require.Equal(t, "graph TD; A-->B", m["mermaid_trace"])
		require.EqualValues(t, 1, m["occurrence_count"])
		require.Equal(t, "https://git.example.com/acme/shop", m["repo_url"])
		require.Equal(t, "full", m["scan_type"])
		require.Equal(t, []any{}, m["triage_thread"])
		require.Equal(t, []any{"t1", "t2"}, m["tags"])
	})
}
