package e2e

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

func newOrg(t *testing.T, credits int, mode string) systest.Org {
	t.Helper()
	o, err := sys.NewOrg(credits, mode)
	require.NoError(t, err)
	return o
}

func post(t *testing.T, key string, body any) systest.Response {
	t.Helper()
	r, err := sys.Do("POST", "/scans", key, body)
	require.NoError(t, err)
	return r
}

// startAtOnce sends every start request at the same time and returns the
// answers' statuses in the order of bodies (0: not sent).
func startAtOnce(key string, bodies []map[string]any) []int {
	codes := make([]int, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := sys.Do("POST", "/scans", key, b); err == nil {
				codes[i] = r.Status
			}
		}()
	}
	wg.Wait()
	return codes
}

// counts counts statuses.
func counts(codes []int) map[int]int {
	n := map[int]int{}
	for _, c := range codes {
		n[c]++
	}
	return n
}

func TestStartValidation(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 1000, "auto")
	other := newOrg(t, 1000, "auto")
	estID, repoURL, _ := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
	otherEst, otherRepo, _ := sys.Estimated(t, other.WriteKey, systest.FlaskFiles)
	emptyRepo := sys.Upload(t, org.WriteKey, map[string]string{"README.md": "# notes\n"})
	zeroEst := estimate(t, sys, org.WriteKey, emptyRepo)
	require.EqualValues(t, 0, zeroEst["total_credits"])
	long := strings.Repeat("x", 2001)
	unknown := "00000000-0000-4000-8000-000000000000"

	tests := []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"repos missing", map[string]any{"cost_estimation_id": estID}, 400, "At least one repository is required"},
		{"repos empty", map[string]any{"cost_estimation_id": estID, "repos": []any{}}, 400, "At least one repository is required"},
		{"bad source", scanBody(estID, repoURL, map[string]any{"repos": []map[string]any{{"url": repoURL, "source": "ftp"}}}), 400, "source"},
		{"repo url not https", map[string]any{"cost_estimation_id": estID, "repos": []map[string]any{{"url": "http://x.example.com/a.git", "branch": "main", "source": "public"}}}, 400, "repos[0].url"},
		{"branch missing for git", map[string]any{"cost_estimation_id": estID, "repos": []map[string]any{{"url": "https://x.example.com/a.git", "source": "public"}}}, 400, "repos[0].branch"},
		{"auth_instructions too long", scanBody(estID, repoURL, map[string]any{"auth_instructions": long}), 400, "auth_instructions"},
		{"custom_context too long", scanBody(estID, repoURL, map[string]any{"custom_context": long}), 400, "custom_context"},
		{"bad context document id", scanBody(estID, repoURL, map[string]any{"context_document_ids": []string{"nope"}}), 400, "context_document_ids[0]"},
		{"target url not http", scanBody(estID, repoURL, map[string]any{"target_urls": []string{"gopher://x.example.com"}}), 400, "target_urls[0]"},
		{"unknown field", scanBody(estID, repoURL, map[string]any{"priority": "high"}), 400, "priority"},
		{"pentest without estimation", map[string]any{"repos": []map[string]any{{"url": repoURL, "source": "upload"}}, "target_urls": []string{"https://example.com"}}, 400, "cost_estimation_id is required for pentest scans"},
		{"custom context without estimation", map[string]any{"repos": []map[string]any{{"url": repoURL, "source": "upload"}}, "custom_context": "focus on auth"}, 400, "cost_estimation_id is required for pentest scans"},
		{"no estimation", map[string]any{"repos": []map[string]any{{"url": repoURL, "source": "upload"}}}, 400, "cost_estimation_id is required"},
		{"malformed estimation id", scanBody("1234", repoURL, nil), 400, "cost_estimation_id"},
		{"private target 10/8", scanBody(estID, repoURL, map[string]any{"target_urls": []string{"http://10.0.0.5/"}}), 400, "target_urls[0] must be a public URL"},
		{"metadata target", scanBody(estID, repoURL, map[string]any{"target_urls": []string{"http://169.254.169.254/latest"}}), 400, "public"},
		{"mapped ipv6 target", scanBody(estID, repoURL, map[string]any{"target_urls": []string{"https://[::ffff:192.168.0.1]/"}}), 400, "public"},
		{"ipv6 loopback target", scanBody(estID, repoURL, map[string]any{"target_urls": []string{"https://[::1]:8443/"}}), 400, "public"},
		{"unknown estimation", scanBody(unknown, repoURL, nil), 404, "not found"},
		{"other org's estimation", scanBody(otherEst, otherRepo, nil), 404, "not found"},
		{"zero credits", scanBody(zeroEst["id"].(string), emptyRepo, nil), 400, "no credits"},
		{"repo not in estimation", scanBody(estID, emptyRepo, nil), 400, "Repository or archive was not included in the estimation"},
		{"branch differs", scanBody(estID, repoURL, map[string]any{"repos": []map[string]any{{"url": repoURL, "branch": "main", "source": "upload"}}}), 400, "Branch does not match the estimation branch"},
		{"unknown context document", scanBody(estID, repoURL, map[string]any{"context_document_ids": []string{unknown}}), 400, "context document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			systest.RequireError(t, post(t, org.WriteKey, tc.body), tc.status, tc.msg)
		})
	}
	require.Equal(t, 1000, sys.Balance(t, org.WriteKey), "failed starts must not use credits")

	t.Run("read key", func(t *testing.T) {
		systest.RequireError(t, post(t, org.ReadKey, scanBody(estID, repoURL, nil)), 403, "write")
	})
	t.Run("repeated repo", func(t *testing.T) {
		body := scanBody(estID, repoURL, map[string]any{"repos": []map[string]any{{"url": repoURL, "source": "upload"}, {"url": repoURL, "source": "upload"}}})
		systest.RequireError(t, post(t, org.WriteKey, body), 400, "repos[1] repeats repos[0]")
	})
	t.Run("repo that failed in the estimation", func(t *testing.T) {
		// A partial estimation: the upload is estimated, the unreachable git repository is not.
		good := sys.Upload(t, org.WriteKey, systest.FlaskFiles)
		r, err := sys.Do("POST", "/cost-estimations", org.WriteKey, map[string]any{"repos": []map[string]any{
			{"source": "upload", "repo_url": good},
			{"source": "public", "repo_url": "https://127.0.0.1:1/nobody/nothing.git", "branch": "main"},
		}})
		require.NoError(t, err)
		require.Equal(t, 201, r.Status, string(r.Body))
		id := r.JSON()["id"].(string)
		var est map[string]any
		require.Eventually(t, func() bool {
			g, err := sys.Do("GET", "/cost-estimations/"+id, org.ReadKey, nil)
			est = g.JSON()
			return err == nil && est["status"] == "partial"
		}, 60*time.Second, 100*time.Millisecond)
		bad := map[string]any{"cost_estimation_id": id, "repos": []map[string]any{
			{"url": good, "source": "upload"}, {"url": "https://127.0.0.1:1/nobody/nothing.git", "branch": "main", "source": "public"}}}
		systest.RequireError(t, post(t, org.WriteKey, bad), 400, "repos[1]: Repository failed in the estimation")
		ok := post(t, org.WriteKey, scanBody(id, good, nil))
		require.Equal(t, 201, ok.Status, "the estimated repository of a partial estimation can be scanned: %s", ok.Body)
	})
	t.Run("already claimed", func(t *testing.T) {
		r := post(t, org.WriteKey, scanBody(estID, repoURL, nil))
		require.Equal(t, 201, r.Status, string(r.Body))
		systest.RequireError(t, post(t, org.WriteKey, scanBody(estID, repoURL, nil)), 400, "already been claimed")
	})
}

func TestNotReadyEstimation(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 100, "auto")
	// A git host that accepts connections and never answers keeps the
	// estimation running while the scan is asked for.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	repo := "https://" + lis.Addr().String() + "/acme/slow.git"
	r, err := sys.Do("POST", "/cost-estimations", org.WriteKey, map[string]any{"repos": []map[string]any{{"source": "public", "repo_url": repo, "branch": "main"}}})
	require.NoError(t, err)
	require.Equal(t, 201, r.Status, string(r.Body))
	est := r.JSON()
	require.Contains(t, []any{"pending", "running"}, est["status"])
	s := post(t, org.WriteKey, map[string]any{"cost_estimation_id": est["id"], "repos": []map[string]any{{"url": repo, "branch": "main", "source": "public"}}})
	systest.RequireError(t, s, 400, "Cost estimation is not ready")
	require.Equal(t, 100, sys.Balance(t, org.WriteKey))
}

func TestInsufficientCreditsThenGrant(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 0, "auto")
	estID, repoURL, credits := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
	systest.RequireError(t, post(t, org.WriteKey, scanBody(estID, repoURL, nil)), 402, "Insufficient credits to start this scan")
	require.Equal(t, 0, sys.Balance(t, org.WriteKey))
	_, err := sys.Ctl("credits", "grant", "--org", org.ID, "--amount", fmt.Sprint(credits))
	require.NoError(t, err)
	r := post(t, org.WriteKey, scanBody(estID, repoURL, nil))
	require.Equal(t, 201, r.Status, "the 402 must have left the estimation claimable: %s", r.Body)
	require.Equal(t, 0, sys.Balance(t, org.WriteKey))
}

func TestConcurrentStartsOfOneEstimation(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 1000, "auto")
	estID, repoURL, credits := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
	bodies := make([]map[string]any, 20)
	for i := range bodies {
		bodies[i] = scanBody(estID, repoURL, nil)
	}
	require.Equal(t, map[int]int{201: 1, 400: 19}, counts(startAtOnce(org.WriteKey, bodies)))
	require.Equal(t, 1000-credits, sys.Balance(t, org.WriteKey), "debited exactly once")
}

func TestConcurrentStartsBeyondBalance(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 0, "auto")
	type est struct {
		id, repo string
		credits  int
	}
	var ests []est
	for i := 0; i < 4; i++ {
		id, repo, c := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
		ests = append(ests, est{id, repo, c})
	}
	per := ests[0].credits
	for _, e := range ests {
		require.Equal(t, per, e.credits, "same app, same cost")
	}
	_, err := sys.Ctl("credits", "grant", "--org", org.ID, "--amount", fmt.Sprint(2*per))
	require.NoError(t, err)
	var bodies []map[string]any
	for _, e := range ests {
		bodies = append(bodies, scanBody(e.id, e.repo, nil))
	}
	codes := startAtOnce(org.WriteKey, bodies)
	require.Equal(t, map[int]int{201: 2, 402: 2}, counts(codes))
	require.Equal(t, 0, sys.Balance(t, org.WriteKey))
	// The refused estimations stay claimable once credits arrive.
	_, err = sys.Ctl("credits", "grant", "--org", org.ID, "--amount", fmt.Sprint(per))
	require.NoError(t, err)
	for i, c := range codes {
		if c == 402 {
			r := post(t, org.WriteKey, scanBody(ests[i].id, ests[i].repo, nil))
			require.Equal(t, 201, r.Status, string(r.Body))
			break
		}
	}
}

func TestFullScan(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 100, "auto")
	other := newOrg(t, 0, "auto")
	estID, repoURL, credits := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
	secret := "Authorization: Bearer top-secret-token-42"
	r := post(t, org.WriteKey, scanBody(estID, repoURL, map[string]any{"auth_instructions": secret, "custom_context": "focus: injection"}))
	require.Equal(t, 201, r.Status, string(r.Body))
	created := r.JSON()
	id := created["id"].(string)
	require.Equal(t, "pending", created["status"])
	require.NotEmpty(t, created["task_id"])
	require.NotEmpty(t, created["message"])

	st := waitScan(t, sys, org.ReadKey, id, 90*time.Second)
	require.Equal(t, "completed", st["status"], "%v", st)
	require.EqualValues(t, 100, st["progress"])
	// The start registers the scan with the findings service at once, with
	// its type; no retry by the worker is needed.
	require.NotContains(t, sys.SettledLog(), "register scan with findings failed")
	require.NotEmpty(t, st["updated_at"])

	d, err := sys.Do("GET", "/scans/"+id, org.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, 200, d.Status, string(d.Body))
	require.NotContains(t, string(d.Body), "top-secret-token-42")
	require.NotContains(t, sys.SettledLog(), "top-secret-token-42", "auth instructions must never be logged")
	scan := d.JSON()
	for _, f := range []string{"id", "task_id", "status", "scan_type", "cost_estimation_id", "repos", "target_urls", "context_document_ids",
		"credits_used", "findings_summary", "error", "created_at", "updated_at", "started_at", "completed_at"} {
		require.Contains(t, scan, f)
	}
	require.NotContains(t, scan, "auth_instructions")
	require.EqualValues(t, credits, scan["credits_used"])
	require.Nil(t, scan["error"])
	require.NotNil(t, scan["started_at"])
	require.NotNil(t, scan["completed_at"])
	sum := scan["findings_summary"].(map[string]any)
	total := 0.0
	for _, sev := range []string{"critical", "high", "medium", "low", "info"} {
		total += sum[sev].(float64)
	}
	require.Positive(t, total, "the vulnerable app has findings: %v", sum)

	f, err := sys.Do("GET", "/scans/"+id+"/findings?limit=100", org.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, 200, f.Status, string(f.Body))
	findings := f.JSON()
	require.EqualValues(t, total, findings["total"])
	var titles []string
	for _, x := range findings["data"].([]any) {
		titles = append(titles, strings.ToLower(x.(map[string]any)["category"].(string)))
	}
	require.Contains(t, titles, "injection", "SQL or command injection must be found: %v", titles)

	// Another organization sees none of it.
	for _, p := range []string{"/scans/" + id, "/scans/" + id + "/status", "/scans/" + id + "/findings"} {
		o, err := sys.Do("GET", p, other.ReadKey, nil)
		require.NoError(t, err)
		systest.RequireError(t, o, 404, "not found")
	}
	l, err := sys.Do("GET", "/scans", other.ReadKey, nil)
	require.NoError(t, err)
	require.EqualValues(t, 0, l.JSON()["total"])
}

func TestListScans(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 1000, "auto")
	var ids []string
	for i := 0; i < 3; i++ {
		estID, repoURL, _ := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
		r := post(t, org.WriteKey, scanBody(estID, repoURL, nil))
		require.Equal(t, 201, r.Status, string(r.Body))
		ids = append(ids, r.JSON()["id"].(string))
	}
	for _, id := range ids {
		waitScan(t, sys, org.ReadKey, id, 90*time.Second)
	}
	get := func(q string) map[string]any {
		r, err := sys.Do("GET", "/scans"+q, org.ReadKey, nil)
		require.NoError(t, err)
		require.Equal(t, 200, r.Status, string(r.Body))
		return r.JSON()
	}
	all := get("")
	require.EqualValues(t, 3, all["total"])
	require.EqualValues(t, 1, all["page"])
	require.EqualValues(t, 15, all["limit"])
	data := all["data"].([]any)
	require.Equal(t, ids[2], data[0].(map[string]any)["id"], "newest first by default")
	for _, d := range data {
		sum := d.(map[string]any)["findings_summary"].(map[string]any)
		n := 0.0
		for _, v := range sum {
			n += v.(float64)
		}
		require.Positive(t, n, "each listed scan carries its own findings summary")
	}
	asc := get("?sort_by=created_at&sort_order=ASC")["data"].([]any)
	require.Equal(t, ids[0], asc[0].(map[string]any)["id"])
	p2 := get("?limit=2&page=2")
	require.Len(t, p2["data"].([]any), 1)
	require.EqualValues(t, 2, p2["page"])
	require.EqualValues(t, 3, get("?status=completed")["total"])
	require.EqualValues(t, 0, get("?status=failed")["total"])
	for _, q := range []string{"?status=done", "?sort_by=name", "?sort_order=up", "?limit=0", "?limit=101", "?page=0", "?limit=abc"} {
		r, err := sys.Do("GET", "/scans"+q, org.ReadKey, nil)
		require.NoError(t, err)
		systest.RequireError(t, r, 400, strings.SplitN(strings.TrimPrefix(q, "?"), "=", 2)[0])
	}
	r, err := sys.Do("GET", "/scans/not-a-uuid", org.ReadKey, nil)
	require.NoError(t, err)
	systest.RequireError(t, r, 400, "id")
	r, err = sys.Do("GET", "/scans/00000000-0000-4000-8000-000000000000", org.ReadKey, nil)
	require.NoError(t, err)
	systest.RequireError(t, r, 404, "Scan not found")
}

func TestContextDocuments(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 100, "auto")
	other := newOrg(t, 0, "auto")
	r, err := sys.Do("POST", "/context-documents", org.WriteKey, map[string]any{"name": "threat model", "content": "exclude: tests/**\nThe admin API is internal."})
	require.NoError(t, err)
	require.Equal(t, 201, r.Status, string(r.Body))
	doc := r.JSON()
	for _, f := range []string{"id", "name", "size", "created_at"} {
		require.Contains(t, doc, f)
	}
	require.EqualValues(t, len("exclude: tests/**\nThe admin API is internal."), doc["size"])
	id := doc["id"].(string)

	g, err := sys.Do("GET", "/context-documents/"+id, org.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, 200, g.Status)
	require.Equal(t, "exclude: tests/**\nThe admin API is internal.", g.JSON()["content"])
	l, err := sys.Do("GET", "/context-documents", org.ReadKey, nil)
	require.NoError(t, err)
	require.EqualValues(t, 1, l.JSON()["total"])
	o, err := sys.Do("GET", "/context-documents/"+id, other.ReadKey, nil)
	require.NoError(t, err)
	systest.RequireError(t, o, 404, "not found")

	for _, bad := range []map[string]any{
		{"content": "x"},
		{"name": "x"},
		{"name": "x", "content": strings.Repeat("a", 100_001)},
		{"name": strings.Repeat("n", 201), "content": "x"},
	} {
		r, err := sys.Do("POST", "/context-documents", org.WriteKey, bad)
		require.NoError(t, err)
		require.Equal(t, 400, r.Status, string(r.Body))
	}
	// Exactly 100,000 characters (multi-byte ones too) is accepted.
	r, err = sys.Do("POST", "/context-documents", org.WriteKey, map[string]any{"name": "big", "content": strings.Repeat("é", 100_000)})
	require.NoError(t, err)
	require.Equal(t, 201, r.Status, string(r.Body))
	require.EqualValues(t, 100_000, r.JSON()["size"])

	// A scan takes the document.
	estID, repoURL, _ := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
	s := post(t, org.WriteKey, scanBody(estID, repoURL, map[string]any{"context_document_ids": []string{id}}))
	require.Equal(t, 201, s.Status, string(s.Body))
	scanID := s.JSON()["id"].(string)
	require.Equal(t, "completed", waitScan(t, sys, org.ReadKey, scanID, 90*time.Second)["status"])
	d, err := sys.Do("GET", "/scans/"+scanID, org.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, []any{id}, d.JSON()["context_document_ids"])
}
