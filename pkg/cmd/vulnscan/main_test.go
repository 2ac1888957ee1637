package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

const testKey = "vs_test_key"

// call is one request the fake API received.
type call struct {
	method, path, query string
	body                []byte
}

// fakeAPI answers the REST API's shapes for one scan: an estimation that
// is terminal at once, a scan that is completed at once, and its findings.
type fakeAPI struct {
	t        *testing.T
	credits  int
	estFail  bool
	scanFail bool
	findings []map[string]any
	finding  map[string]any // GET /findings/f1, when set
	sarif    string
	mu       sync.Mutex
	calls    []call
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, call{r.Method, r.URL.Path, r.URL.RawQuery, body})
	f.mu.Unlock()
	if r.Header.Get("X-Api-Key") != testKey {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"statusCode":401,"message":"Invalid API key","error":"Unauthorized"}`)
		return
	}
	answer := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	p := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case r.Method == http.MethodPost && p == "/uploads":
		answer(map[string]any{"id": "up1", "repo_url": "upload://up1", "size_bytes": len(body), "sha256": "x"})
	case r.Method == http.MethodPost && p == "/cost-estimations":
		status, res := "completed", map[string]any{"repo_url": "r", "branch": "main", "commit_sha": "0123456789abcdef0123", "status": "completed", "credits": f.credits}
		if f.estFail {
			status, res["status"], res["error"] = "failed", "failed", "repository not found"
		}
		answer(map[string]any{"id": "est1", "status": status, "total_credits": f.credits, "repo_results": []any{res}})
	case r.Method == http.MethodPost && p == "/scans":
		answer(map[string]any{"id": "scan1", "task_id": "t", "status": "queued", "message": "started"})
	case r.Method == http.MethodGet && p == "/scans/scan1/status":
		answer(map[string]any{"id": "scan1", "status": "completed", "progress": 100})
	case r.Method == http.MethodGet && p == "/scans/scan1":
		d := map[string]any{"id": "scan1", "status": "completed", "scan_type": "full"}
		if f.scanFail {
			d["status"], d["error"] = "failed", "clone failed"
		}
		answer(d)
	case r.Method == http.MethodGet && p == "/scans/scan1/findings/export":
		_, _ = io.WriteString(w, f.sarif)
	case r.Method == http.MethodGet && (p == "/scans/scan1/findings" || p == "/findings"):
		data := f.findings
		if data == nil {
			data = []map[string]any{}
		}
		answer(map[string]any{"data": data, "total": len(data), "page": 1, "limit": 100})
	case r.Method == http.MethodGet && p == "/findings/f1" && f.finding != nil:
		answer(f.finding)
	case r.Method == http.MethodGet && p == "/findings/f1":
		answer(map[string]any{"id": "f1", "title": "SQL injection", "severity": "high", "state": "open", "category": "injection",
			"affected_file": "app/db.go", "line": 42, "occurrence_count": 3, "found_at": "2026-01-02T03:04:05Z", "description": "Query built from input.",
			"triage_thread": []any{map[string]any{"id": "c1", "comment": "looking", "username": "ana", "source": "api", "timestamp": "2026-01-03T00:00:00Z"}}})
	case r.Method == http.MethodPatch && p == "/findings/f1":
		var in map[string]any
		require.NoError(f.t, json.Unmarshal(body, &in))
		answer(map[string]any{"id": "f1", "state": in["state"], "severity": "high", "duplicate_of": in["duplicate_of"]})
	case r.Method == http.MethodPost && p == "/findings/f1/comments":
		answer(map[string]any{"comment_id": "c9"})
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"statusCode":404,"message":"Finding not found","error":"Not Found"}`)
	}
}

func (f *fakeAPI) received() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// find returns the body of the one request with method and path.
func (f *fakeAPI) find(method, path string) map[string]any {
	f.t.Helper()
	var out map[string]any
	n := 0
	for _, c := range f.received() {
		if c.method == method && c.path == path {
			n++
			require.NoError(f.t, json.Unmarshal(c.body, &out))
		}
	}
	require.Equal(f.t, 1, n, "%s %s requests", method, path)
	return out
}

// runCLI runs the command line against srv and returns the exit code,
// stdout and stderr.
func runCLI(t *testing.T, srv *httptest.Server, key string, args ...string) (int, string, string) {
	t.Helper()
	vars := map[string]string{"VULNSCAN_API_KEY": key, "CI": "true"}
	if srv != nil {
		vars["VULNSCAN_URL"] = srv.URL
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, env{getenv: func(k string) string { return vars[k] }, stdout: &out, stderr: &errOut})
	return code, out.String(), errOut.String()
}

func newFake(t *testing.T, f *fakeAPI) *httptest.Server {
	f.t = t
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv
}

// TestUsageErrors: every wrong command line exits 2 with its message and
// the hint, without a request to the API.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{}
	srv := newFake(t, f)
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "no command given"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"findings"}, "findings needs a subcommand"},
		{[]string{"findings", "delete"}, `unknown findings subcommand "delete"`},
		{[]string{"scan", "--no-such-flag"}, "scan: flag provided but not defined: -no-such-flag"},
		{[]string{"scan", dir, dir}, "one directory at most"},
		{[]string{"scan", dir, "--repo", "https://github.com/a/b"}, "give a directory or --repo, not both"},
		{[]string{"scan", dir, "--branch", "dev"}, "--branch needs --repo"},
		{[]string{"scan", dir, "--base", "main"}, "--base needs --repo"},
		{[]string{"scan", "--repo", "https://github.com/a/b", "--pull-request", "3"}, "--base-commit and --pull-request need --base"},
		{[]string{"scan", "--repo", "https://github.com/a/b", "--source", "private"}, `--source must be one of connected, public, not "private"`},
		{[]string{"scan", dir, "--fail-on", "severe"}, `--fail-on must be one of critical, high, medium, low, info, not "severe"`},
		{[]string{"scan", dir, "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"scan", "--local", "--repo", "https://github.com/a/b"}, "--local scans a directory"},
		{[]string{"estimate", "a", "b"}, "one directory at most"},
		{[]string{"findings", "list", "extra"}, `findings list takes no arguments, got "extra"`},
		{[]string{"findings", "show"}, "findings show needs one finding id"},
		{[]string{"findings", "show", "a", "b"}, "findings show needs one finding id"},
		{[]string{"findings", "triage", "f1"}, "findings triage needs --state, --severity, --duplicate-of or --comment"},
		{[]string{"findings", "triage", "f1", "--state", "closed"}, "--state must be one of"},
		{[]string{"findings", "triage", "f1", "--severity", "urgent"}, "--severity must be one of"},
		{[]string{"findings", "triage", "f1", "--comment", "x", "--reason", "y"}, "--reason goes with --state"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, srv, testKey, c.args...)
			require.Equal(t, exitError, code)
			require.Empty(t, out)
			require.Contains(t, errOut, c.msg)
			require.Contains(t, errOut, "Run 'vulnscan help' for usage.")
		})
	}
	require.Empty(t, f.received(), "no usage error reaches the API")
}

// TestHelpAndMissingKey: help prints the usage and exits 0; a command that
// needs the API without a key is a usage error.
func TestHelpAndMissingKey(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"--help"}, {"scan", "-h"}, {"findings", "list", "--help"}} {
		code, out, errOut := runCLI(t, nil, testKey, args...)
		require.Equal(t, exitOK, code, args)
		require.Contains(t, out, "Usage:\n  vulnscan scan")
		require.Empty(t, errOut)
	}
	for _, args := range [][]string{{"findings", "list"}, {"findings", "show", "f1"}, {"estimate", "--repo", "https://github.com/a/b"}} {
		code, _, errOut := runCLI(t, nil, "  ", args...)
		require.Equal(t, exitError, code, args)
		require.Contains(t, errOut, "VULNSCAN_API_KEY is not set")
	}
}

// TestAPIErrorsExit2: the API's error message is printed and the exit code
// is 2.
func TestAPIErrorsExit2(t *testing.T) {
	t.Parallel()
	srv := newFake(t, &fakeAPI{})
	code, out, errOut := runCLI(t, srv, "wrong", "findings", "list")
	require.Equal(t, exitError, code)
	require.Empty(t, out)
	require.Equal(t, "vulnscan: the API answered 401 Unauthorized: Invalid API key\n", errOut)
	code, _, errOut = runCLI(t, srv, testKey, "findings", "show", "nope")
	require.Equal(t, exitError, code)
	require.Equal(t, "vulnscan: the API answered 404 Not Found: Finding not found\n", errOut)
}

func apiFinding(id, severity, state string) map[string]any {
	return map[string]any{"id": id, "title": "t-" + id, "severity": severity, "state": state, "affected_file": "src/" + id + ".go", "line": 7}
}

// TestScanFailOn: --fail-on counts open and true-positive findings at or
// above the severity; triaged-away or resolved ones never fail the build.
func TestScanFailOn(t *testing.T) {
	t.Parallel()
	fs := []map[string]any{
		apiFinding("a", "critical", "false_positive"),
		apiFinding("b", "high", "accepted_risk"),
		apiFinding("c", "high", "resolved"),
		apiFinding("d", "medium", "open"),
		apiFinding("e", "low", "true_positive"),
		apiFinding("f", "info", "open"),
	}
	for _, c := range []struct {
		failOn  string
		code    int
		failing int
	}{
		{"critical", exitOK, 0},
		{"high", exitOK, 0},
		{"medium", exitFindings, 1},
		{"low", exitFindings, 2},
		{"info", exitFindings, 3},
	} {
		t.Run(c.failOn, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, &fakeAPI{credits: 4, findings: fs})
			code, out, errOut := runCLI(t, srv, testKey, "scan", "--repo", "https://github.com/a/b", "--fail-on", c.failOn, "--json")
			require.Equal(t, c.code, code, errOut)
			var got struct {
				Status   string           `json:"status"`
				ScanID   string           `json:"scan_id"`
				ScanType string           `json:"scan_type"`
				FailOn   string           `json:"fail_on"`
				Failing  int              `json:"failing"`
				Counts   map[string]int   `json:"counts"`
				Findings []map[string]any `json:"findings"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			require.Equal(t, c.failing, got.Failing)
			require.Equal(t, c.failOn, got.FailOn)
			require.Equal(t, "completed", got.Status)
			require.Equal(t, "scan1", got.ScanID)
			require.Equal(t, "full", got.ScanType)
			require.Equal(t, map[string]int{"critical": 1, "high": 2, "medium": 1, "low": 1, "info": 1}, got.Counts)
			require.Len(t, got.Findings, 6)
			if c.failing > 0 {
				require.Contains(t, errOut, "finding(s) at or above the --fail-on severity")
			}
		})
	}
}

// TestScanRepoRequestsAndTable follows a repository scan through the API:
// the estimation names the repository, the scan takes the estimated branch
// and the target URLs, the SARIF file is the server's export, and the table
// lists the findings with their counts.
func TestScanRepoRequestsAndTable(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{credits: 7, findings: []map[string]any{apiFinding("x1", "high", "open")}, sarif: `{"version":"2.1.0","runs":[]}`}
	srv := newFake(t, f)
	sarifPath := filepath.Join(t.TempDir(), "out.sarif")
	code, out, errOut := runCLI(t, srv, testKey, "scan", "--repo", "https://github.com/a/b", "--source", "public",
		"--target-url", "https://a.example", "--target-url", "https://b.example", "--sarif", sarifPath)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, map[string]any{"repos": []any{map[string]any{"source": "public", "repo_url": "https://github.com/a/b"}}},
		f.find(http.MethodPost, "/v1/cost-estimations"))
	require.Equal(t, map[string]any{"cost_estimation_id": "est1", "target_urls": []any{"https://a.example", "https://b.example"},
		"repos": []any{map[string]any{"url": "https://github.com/a/b", "branch": "main", "source": "public"}}},
		f.find(http.MethodPost, "/v1/scans"))
	log, err := os.ReadFile(sarifPath)
	require.NoError(t, err)
	require.Equal(t, f.sarif, string(log))
	var exportQuery string
	for _, c := range f.received() {
		if c.path == "/v1/scans/scan1/findings/export" {
			exportQuery = c.query
		}
	}
	require.Equal(t, "format=sarif", exportQuery)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^SEVERITY\s+STATE\s+LOCATION\s+TITLE\s+ID$`, lines[0])
	require.Regexp(t, `^high\s+open\s+src/x1\.go:7\s+t-x1\s+x1$`, lines[1])
	require.Equal(t, "1 findings: 0 critical, 1 high, 0 medium, 0 low, 0 info", lines[2])
	require.Contains(t, errOut, "Scan scan1 started (7 credits)")
}

// TestScanWithoutWait prints only the scan id (or its JSON) and returns at
// once; a pull-request scan sends its base to the estimation.
func TestScanWithoutWait(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{credits: 2}
	srv := newFake(t, f)
	code, out, errOut := runCLI(t, srv, testKey, "scan", "--repo", "https://github.com/a/b", "--branch", "feature",
		"--base", "main", "--base-commit", "abc", "--pull-request", "12")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "scan1\n", out)
	require.Equal(t, map[string]any{"repos": []any{map[string]any{"source": "connected", "repo_url": "https://github.com/a/b",
		"branch": "feature", "base_branch": "main", "base_commit": "abc", "pull_request": float64(12)}}},
		f.find(http.MethodPost, "/v1/cost-estimations"))
	for _, c := range f.received() {
		require.NotContains(t, c.path, "/status", "no polling without --wait")
	}

	code, out, errOut = runCLI(t, srv, testKey, "scan", "--repo", "https://github.com/a/b", "--json")
	require.Equal(t, exitOK, code, errOut)
	require.JSONEq(t, `{"scan_id":"scan1","status":"queued","cost_estimation_id":"est1"}`, out)
}

// TestScanNothingToScan: an estimation of zero credits starts no scan,
// writes an empty SARIF log and passes --fail-on.
func TestScanNothingToScan(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{credits: 0}
	srv := newFake(t, f)
	sarifPath := filepath.Join(t.TempDir(), "empty.sarif")
	code, out, errOut := runCLI(t, srv, testKey, "scan", "--repo", "https://github.com/a/b", "--fail-on", "info", "--sarif", sarifPath)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "0 findings: 0 critical, 0 high, 0 medium, 0 low, 0 info\n", out)
	require.Contains(t, errOut, "No application was detected")
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []any `json:"results"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(sarifPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &log))
	require.Equal(t, "2.1.0", log.Version)
	for _, r := range log.Runs {
		require.Empty(t, r.Results)
	}
	for _, c := range f.received() {
		require.NotEqual(t, "/v1/scans", c.path, "no scan was started")
	}
}

// TestScanFailures: a failed estimation or scan exits 2 with its reason.
func TestScanFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		api  *fakeAPI
		msg  string
	}{
		{"estimation", &fakeAPI{credits: 1, estFail: true}, "vulnscan: the estimation est1 failed: r: repository not found\n"},
		{"scan", &fakeAPI{credits: 1, scanFail: true}, "vulnscan: scan scan1 failed: clone failed\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, c.api)
			code, out, errOut := runCLI(t, srv, testKey, "scan", "--repo", "https://github.com/a/b", "--wait")
			require.Equal(t, exitError, code)
			require.Empty(t, out)
			require.True(t, strings.HasSuffix(errOut, c.msg), errOut)
		})
	}
}

// TestScanDirectoryUploadsPackedTree: a directory is packed without what
// .gitignore excludes, uploaded as tar.gz, and scanned as an upload.
func TestScanDirectoryUploadsPackedTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{
		".gitignore":         "*.log\nbuild/\n",
		"main.go":            "package main\n",
		"debug.log":          "noise",
		"build/out.bin":      "bin",
		"pkg/lib/lib.go":     "package lib\n",
		"pkg/lib/.gitignore": "secret.txt\n",
		"pkg/lib/secret.txt": "s",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	f := &fakeAPI{credits: 3}
	srv := newFake(t, f)
	code, out, errOut := runCLI(t, srv, testKey, "scan", dir, "--json")
	require.Equal(t, exitOK, code, errOut)
	require.JSONEq(t, `{"scan_id":"scan1","status":"queued","cost_estimation_id":"est1"}`, out)
	var upload call
	for _, c := range f.received() {
		if c.path == "/v1/uploads" {
			upload = c
		}
	}
	require.Equal(t, []string{".gitignore", "main.go", "pkg/lib/.gitignore", "pkg/lib/lib.go"}, names(t, upload.body))
	require.Equal(t, map[string]any{"repos": []any{map[string]any{"source": "upload", "repo_url": "upload://up1"}}},
		f.find(http.MethodPost, "/v1/cost-estimations"))
	require.Equal(t, map[string]any{"cost_estimation_id": "est1", "repos": []any{map[string]any{"url": "upload://up1", "branch": "", "source": "upload"}}},
		f.find(http.MethodPost, "/v1/scans"))
	require.Contains(t, errOut, "Packed 4 files")
	require.Contains(t, errOut, "Uploaded as upload://up1")
}

// TestEstimateOutput prints each repository's result and the total, or the
// estimation as JSON.
func TestEstimateOutput(t *testing.T) {
	t.Parallel()
	srv := newFake(t, &fakeAPI{credits: 5})
	code, out, errOut := runCLI(t, srv, testKey, "estimate", "--repo", "https://github.com/a/b")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "r main@0123456789ab: completed, 5 credits\nestimation est1: completed, 5 credits\n", out)
	code, out, errOut = runCLI(t, srv, testKey, "estimate", "--repo", "https://github.com/a/b", "--json")
	require.Equal(t, exitOK, code, errOut)
	var est map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &est))
	require.Equal(t, "est1", est["id"])
	require.EqualValues(t, 5, est["total_credits"])
}

// TestFindingsCommands covers list, show and triage against the API.
func TestFindingsCommands(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{findings: []map[string]any{apiFinding("f1", "high", "open"), apiFinding("f2", "low", "resolved")}}
	srv := newFake(t, f)

	code, out, errOut := runCLI(t, srv, testKey, "findings", "list", "--severity", "high", "--state", "open", "--page", "2", "--limit", "5")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "2 of 2 findings (page 1)\n")
	require.Regexp(t, `(?m)^low\s+resolved\s+src/f2\.go:7\s+t-f2\s+f2$`, out)
	last := f.received()[len(f.received())-1]
	require.Equal(t, "/v1/findings", last.path)
	require.Equal(t, "limit=5&page=2&severity=high&sort_by=severity&sort_order=DESC&state=open", last.query)

	code, out, errOut = runCLI(t, srv, testKey, "findings", "list", "--scan", "scan1", "--all", "--json")
	require.Equal(t, exitOK, code, errOut)
	var page struct {
		Data  []map[string]any `json:"data"`
		Total int              `json:"total"`
		Limit int              `json:"limit"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	require.Len(t, page.Data, 2)
	require.Equal(t, 2, page.Total)
	require.Equal(t, 2, page.Limit)
	last = f.received()[len(f.received())-1]
	require.Equal(t, "/v1/scans/scan1/findings", last.path)
	require.Contains(t, last.query, "limit=100")

	code, out, errOut = runCLI(t, srv, testKey, "findings", "show", "f1")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "SQL injection\nhigh · open · injection\nid f1\nat app/db.go:42\nseen in 3 scan(s), first 2026-01-02T03:04:05Z\n\n"+
		"Query built from input.\n\nTriage thread:\n  2026-01-03T00:00:00Z ana (api): looking\n", out)

	code, out, errOut = runCLI(t, srv, testKey, "findings", "triage", "f1", "--state", "false_positive", "--reason", "test code",
		"--duplicate-of", "none", "--comment", "checked")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "f1: false_positive, high\nf1: comment c9 added\n", out)
	require.Equal(t, map[string]any{"state": "false_positive", "reason": "test code", "duplicate_of": nil}, f.find(http.MethodPatch, "/v1/findings/f1"))
	require.Equal(t, map[string]any{"comment": "checked"}, f.find(http.MethodPost, "/v1/findings/f1/comments"))

	code, out, errOut = runCLI(t, srv, testKey, "findings", "triage", "f1", "--comment", "again", "--json")
	require.Equal(t, exitOK, code, errOut)
	require.JSONEq(t, `{"id":"f1","comment_id":"c9"}`, out)
}
