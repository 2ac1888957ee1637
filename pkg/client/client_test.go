package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recorded is one request the test API received.
type recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// api is a loopback API that records requests and answers each with the
// next of its scripted answers (the last one repeats).
type api struct {
	mu      sync.Mutex
	got     []recorded
	answers []answer
}

type answer struct {
	status int
	header map[string]string
	body   string
}

func newAPI(t *testing.T, answers ...answer) (*api, *Client) {
	t.Helper()
	a := &api{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.got = append(a.got, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		ans := a.answers[min(len(a.got), len(a.answers))-1]
		a.mu.Unlock()
		for k, v := range ans.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ans.status)
		_, _ = io.WriteString(w, ans.body)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, "vs_test_key")
	require.NoError(t, err)
	return a, c
}

func (a *api) requests() []recorded {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]recorded(nil), a.got...)
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, key, want, err string
	}{
		{in: "https://api.example.com", key: "k", want: "https://api.example.com/v1"},
		{in: "https://api.example.com/", key: "k", want: "https://api.example.com/v1"},
		{in: " https://api.example.com/v1/ ", key: "k", want: "https://api.example.com/v1"},
		{in: "http://127.0.0.1:8080/prefix?x=1#f", key: "k", want: "http://127.0.0.1:8080/prefix/v1"},
		{in: "ftp://api.example.com", key: "k", err: "is not an http(s) URL"},
		{in: "api.example.com", key: "k", err: "is not an http(s) URL"},
		{in: "https://api.example.com", key: "", err: "no API key"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			c, err := New(tc.in, tc.key)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, c.BaseURL())
		})
	}
}

func TestRequestHeadersAndBodies(t *testing.T) {
	t.Parallel()
	a, c := newAPI(t, answer{status: 201, body: `{"id":"u1","repo_url":"upload://u1","size_bytes":3,"sha256":"ab"}`})
	ctx := context.Background()

	up, err := c.Upload(ctx, []byte("zip"), "application/zip")
	require.NoError(t, err)
	require.Equal(t, Upload{ID: "u1", RepoURL: "upload://u1", SizeBytes: 3, SHA256: "ab"}, up)
	_, err = c.CreateEstimation(ctx, []EstimationRepo{{Source: "public", RepoURL: "https://git.example.com/a.git", BaseBranch: "main", PullRequest: 7}})
	require.NoError(t, err)

	got := a.requests()
	require.Len(t, got, 2)
	require.Equal(t, "POST", got[0].Method)
	require.Equal(t, "/v1/uploads", got[0].Path)
	require.Equal(t, "zip", string(got[0].Body))
	require.Equal(t, "application/zip", got[0].Header.Get("Content-Type"))
	for _, r := range got {
		require.Equal(t, "vs_test_key", r.Header.Get("X-Api-Key"))
		require.Equal(t, "application/json", r.Header.Get("Accept"))
		require.Equal(t, "vulnscan-cli", r.Header.Get("User-Agent"))
	}
	require.Equal(t, "/v1/cost-estimations", got[1].Path)
	require.Equal(t, "application/json", got[1].Header.Get("Content-Type"))
	require.JSONEq(t, `{"repos":[{"source":"public","repo_url":"https://git.example.com/a.git","base_branch":"main","pull_request":7}]}`, string(got[1].Body),
		"empty optional fields are left out")
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 600)
	for _, tc := range []struct {
		name string
		ans  answer
		want APIError
		text string
	}{
		{"one message", answer{status: 404, body: `{"statusCode":404,"message":"Finding not found","error":"Not Found"}`},
			APIError{StatusCode: 404, Message: "Finding not found", ErrorText: "Not Found"}, "404 Not Found: Finding not found"},
		{"field messages", answer{status: 400, body: `{"statusCode":400,"message":["limit must be at most 100","page must be positive"],"error":"Bad Request"}`},
			APIError{StatusCode: 400, Message: "limit must be at most 100; page must be positive", ErrorText: "Bad Request"},
			"400 Bad Request: limit must be at most 100; page must be positive"},
		{"not JSON", answer{status: 403, body: "  forbidden by proxy \n"},
			APIError{StatusCode: 403, Message: "forbidden by proxy"}, "403 Forbidden: forbidden by proxy"},
		{"long body cut", answer{status: 400, body: long},
			APIError{StatusCode: 400, Message: long[:500]}, "400 Bad Request: " + long[:500]},
		{"no message", answer{status: 409, body: `{"statusCode":409,"error":"Conflict"}`},
			APIError{StatusCode: 409, ErrorText: "Conflict"}, "409 Conflict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, c := newAPI(t, tc.ans)
			_, err := c.GetFinding(context.Background(), "f1")
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, tc.want, *ae)
			require.Equal(t, tc.text, err.Error())
		})
	}
}

func TestReadsAreRetried(t *testing.T) {
	t.Parallel()
	a, c := newAPI(t,
		answer{status: 503, body: `{"statusCode":503,"message":"down","error":"Service Unavailable"}`},
		answer{status: 429, header: map[string]string{"Retry-After": "1"}, body: `{"statusCode":429,"message":"slow down","error":"Too Many Requests"}`},
		answer{status: 200, body: `{"id":"s1","status":"running","progress":40}`})
	st, err := c.GetScanStatus(context.Background(), "s1")
	require.NoError(t, err)
	require.Equal(t, ScanStatus{ID: "s1", Status: "running", Progress: 40}, st)
	require.Len(t, a.requests(), 3)
	require.Equal(t, "/v1/scans/s1/status", a.requests()[2].Path)
}

func TestReadRetriesRunOut(t *testing.T) {
	t.Parallel()
	a, c := newAPI(t, answer{status: 502, body: `{"statusCode":502,"message":"bad gateway","error":"Bad Gateway"}`})
	c.Retries = 1
	_, err := c.GetScan(context.Background(), "s1")
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 502, ae.StatusCode)
	require.Len(t, a.requests(), 2, "one try and one retry")
}

func TestWritesAreNotRetried(t *testing.T) {
	t.Parallel()
	a, c := newAPI(t, answer{status: 503, body: `{"statusCode":503,"message":"down","error":"Service Unavailable"}`},
		answer{status: 201, body: `{"id":"s1"}`})
	_, err := c.StartScan(context.Background(), StartScan{CostEstimationID: "e1", Repos: []ScanRepo{{URL: "upload://u1", Source: "upload"}}})
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 503, ae.StatusCode)
	require.Len(t, a.requests(), 1, "a repeated POST could start a second scan")
	require.JSONEq(t, `{"cost_estimation_id":"e1","repos":[{"url":"upload://u1","branch":"","source":"upload"}]}`, string(a.requests()[0].Body))
}

func TestListFindingsQuery(t *testing.T) {
	t.Parallel()
	a, c := newAPI(t, answer{status: 200, body: `{"data":[],"total":0,"page":2,"limit":10}`})
	ctx := context.Background()
	_, err := c.ListFindings(ctx, FindingQuery{Severity: "high", State: "open", SortBy: "found_at", SortOrder: "ASC", Page: 2, Limit: 10})
	require.NoError(t, err)
	_, err = c.ListFindings(ctx, FindingQuery{ScanID: "a/b"})
	require.NoError(t, err)
	got := a.requests()
	require.Equal(t, "/v1/findings", got[0].Path)
	require.Equal(t, "limit=10&page=2&severity=high&sort_by=found_at&sort_order=ASC&state=open", got[0].Query)
	require.Equal(t, "/v1/scans/a/b/findings", got[1].Path, "the id is escaped as one segment")
	require.Empty(t, got[1].Query, "unset filters are not sent")
}

func TestAllFindingsReadsEveryPage(t *testing.T) {
	t.Parallel()
	page := func(n, from, count int) answer {
		var data []map[string]any
		for i := range count {
			data = append(data, map[string]any{"id": string(rune('a' + from + i))})
		}
		b, _ := json.Marshal(map[string]any{"data": data, "total": 203, "page": n, "limit": 100})
		return answer{status: 200, body: string(b)}
	}
	a, c := newAPI(t, page(1, 0, 100), page(2, 100, 100), page(3, 200, 3))
	all, err := c.AllFindings(context.Background(), FindingQuery{ScanID: "s1", Page: 9, Limit: 5})
	require.NoError(t, err)
	require.Len(t, all, 203)
	got := a.requests()
	require.Len(t, got, 3, "page * limit reaches total on the third page")
	for i, r := range got {
		require.Contains(t, r.Query, "limit=100")
		require.Contains(t, r.Query, "page="+string(rune('1'+i)))
	}
}

func TestTriageBody(t *testing.T) {
	t.Parallel()
	a, c := newAPI(t, answer{status: 200, body: `{"id":"f1","state":"open","severity":"low","duplicate_of":null}`})
	ctx := context.Background()
	r, err := c.TriageFinding(ctx, "f1", Triage{Severity: "low", SetDuplicate: true, Reason: "dup was wrong"})
	require.NoError(t, err)
	require.Equal(t, TriageResult{ID: "f1", State: "open", Severity: "low"}, r)
	_, err = c.TriageFinding(ctx, "f1", Triage{State: "resolved"})
	require.NoError(t, err)
	got := a.requests()
	require.Equal(t, "PATCH", got[0].Method)
	require.JSONEq(t, `{"severity":"low","duplicate_of":null,"reason":"dup was wrong"}`, string(got[0].Body), "a nil duplicate unmarks")
	require.JSONEq(t, `{"state":"resolved"}`, string(got[1].Body), "duplicate_of is sent only when asked")
}

func TestCommentAndExport(t *testing.T) {
	t.Parallel()
	a, c := newAPI(t, answer{status: 201, body: `{"comment_id":"c1"}`}, answer{status: 200, body: `{"version":"2.1.0","runs":[]}`})
	ctx := context.Background()
	id, err := c.Comment(ctx, "f1", "looks real")
	require.NoError(t, err)
	require.Equal(t, "c1", id)
	var buf bytes.Buffer
	require.NoError(t, c.Export(ctx, "s1", "sarif", &buf))
	require.Equal(t, `{"version":"2.1.0","runs":[]}`, buf.String())
	got := a.requests()
	require.Equal(t, "/v1/findings/f1/comments", got[0].Path)
	require.JSONEq(t, `{"comment":"looks real"}`, string(got[0].Body))
	require.Equal(t, "/v1/scans/s1/findings/export", got[1].Path)
	require.Equal(t, "format=sarif", got[1].Query)
}

func TestUnexpectedAnswer(t *testing.T) {
	t.Parallel()
	_, c := newAPI(t, answer{status: 200, body: `<html>`})
	_, err := c.GetEstimation(context.Background(), "e1")
	require.ErrorContains(t, err, "GET /cost-estimations/e1: the answer is not the expected JSON")
}

func TestEstimationTerminal(t *testing.T) {
	t.Parallel()
	for status, terminal := range map[string]bool{"pending": false, "running": false, "completed": true, "partial": true, "failed": true} {
		require.Equal(t, terminal, Estimation{Status: status}.Terminal(), status)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled)
	require.NoError(t, Sleep(context.Background(), time.Millisecond))
}

func TestCancelledRead(t *testing.T) {
	t.Parallel()
	_, c := newAPI(t, answer{status: 503, body: `{}`})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.GetScan(ctx, "s1")
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
}
