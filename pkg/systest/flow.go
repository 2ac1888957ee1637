package systest

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// The steps most end-to-end tests take through the REST API: upload a
// tree, estimate it, start a scan, poll until something ends. The plain
// functions return errors (for benchmarks and tools); the methods taking
// a testing.TB fail the test instead.

// waitFor bounds every poll of these helpers: far above what any step
// takes on a loaded machine, so that a test fails on a hang, not on speed.
const waitFor = 3 * time.Minute

// Zip returns a zip archive of files (slash-separated path → content).
func Zip(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, body); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UploadArchive sends a zip archive to POST /uploads and returns the
// upload's repository URL.
func (s *System) UploadArchive(ctx context.Context, key string, archive []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL+"/uploads", bytes.NewReader(archive))
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/zip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var up struct {
		RepoURL string `json:"repo_url"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &up) != nil || up.RepoURL == "" {
		return "", fmt.Errorf("upload: %d %s", resp.StatusCode, body)
	}
	return up.RepoURL, nil
}

// UploadFiles uploads files as a zip archive and returns the repository URL.
func (s *System) UploadFiles(ctx context.Context, key string, files map[string]string) (string, error) {
	archive, err := Zip(files)
	if err != nil {
		return "", err
	}
	return s.UploadArchive(ctx, key, archive)
}

// Poll reads path with key until its "status" is one of statuses and
// returns the last answer; it gives up after timeout.
func (s *System) Poll(ctx context.Context, key, path string, timeout time.Duration, statuses ...string) (map[string]any, error) {
	deadline := time.Now().Add(timeout)
	for {
		r, err := s.Do(http.MethodGet, path, key, nil)
		if err != nil {
			return nil, err
		}
		if r.Status != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %d %s", path, r.Status, r.Body)
		}
		m := r.JSON()
		if st, _ := m["status"].(string); slices.Contains(statuses, st) {
			return m, nil
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("%s is still %v after %s, not one of %v", path, m["status"], timeout, statuses)
		}
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Estimation statuses after which an estimation does not change.
var estimationEnds = []string{"completed", "partial", "failed"}

// EstimateUpload starts an estimation of one uploaded repository and
// waits until it ends; it returns the estimation as the API shows it.
func (s *System) EstimateUpload(ctx context.Context, key, repoURL string) (map[string]any, error) {
	r, err := s.Do(http.MethodPost, "/cost-estimations", key, map[string]any{"repos": []map[string]any{{"source": "upload", "repo_url": repoURL}}})
	if err != nil {
		return nil, err
	}
	id, _ := r.JSON()["id"].(string)
	if r.Status != http.StatusCreated || id == "" {
		return nil, fmt.Errorf("estimate: %d %s", r.Status, r.Body)
	}
	return s.Poll(ctx, key, "/cost-estimations/"+id, waitFor, estimationEnds...)
}

// UploadScan is the body of POST /scans for one uploaded repository and
// the live targets given.
func UploadScan(estimationID, repoURL string, targets ...string) map[string]any {
	b := map[string]any{"cost_estimation_id": estimationID, "repos": []map[string]any{{"url": repoURL, "branch": "", "source": "upload"}}}
	if len(targets) > 0 {
		b["target_urls"] = targets
	}
	return b
}

// Org creates an organization with credits and automatic verification,
// and fails the test when it cannot.
func (s *System) Org(t testing.TB, credits int) Org {
	t.Helper()
	o, err := s.NewOrg(credits, "auto")
	require.NoError(t, err)
	return o
}

// Call sends a request like Do and fails the test when it cannot be sent.
func (s *System) Call(t testing.TB, method, path, key string, body any) Response {
	t.Helper()
	r, err := s.Do(method, path, key, body)
	require.NoError(t, err)
	return r
}

// Upload uploads files as a zip archive and returns the repository URL.
func (s *System) Upload(t testing.TB, key string, files map[string]string) string {
	t.Helper()
	u, err := s.UploadFiles(context.Background(), key, files)
	require.NoError(t, err)
	return u
}

// StartEstimation starts an estimation of repos (API repository entries)
// and returns its id.
func (s *System) StartEstimation(t testing.TB, key string, repos ...map[string]any) string {
	t.Helper()
	r := s.Call(t, http.MethodPost, "/cost-estimations", key, map[string]any{"repos": repos})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	return r.JSON()["id"].(string)
}

// Estimate starts an estimation of repos and waits until it ends.
func (s *System) Estimate(t testing.TB, key string, repos ...map[string]any) map[string]any {
	t.Helper()
	return s.WaitStatus(t, key, "/cost-estimations/"+s.StartEstimation(t, key, repos...), estimationEnds...)
}

// Estimated uploads files and estimates them; the estimation must
// complete with a positive price. It returns the estimation's id, the
// repository URL and the price in credits.
func (s *System) Estimated(t testing.TB, key string, files map[string]string) (id, repoURL string, credits int) {
	t.Helper()
	repoURL = s.Upload(t, key, files)
	est, err := s.EstimateUpload(context.Background(), key, repoURL)
	require.NoError(t, err)
	require.Equal(t, "completed", est["status"], "%v", est)
	credits = int(est["total_credits"].(float64))
	require.Positive(t, credits)
	return est["id"].(string), repoURL, credits
}

// WaitStatus polls path until its status is one of statuses and returns it.
func (s *System) WaitStatus(t testing.TB, key, path string, statuses ...string) map[string]any {
	t.Helper()
	m, err := s.Poll(context.Background(), key, path, waitFor, statuses...)
	require.NoError(t, err, "\n%s", s.Tail(80))
	return m
}

// WaitScan polls a scan until it is completed or failed and returns its details.
func (s *System) WaitScan(t testing.TB, key, scanID string) map[string]any {
	t.Helper()
	return s.WaitStatus(t, key, "/scans/"+scanID, "completed", "failed")
}

// StartScan starts a scan with body (see UploadScan) and returns its id.
func (s *System) StartScan(t testing.TB, key string, body map[string]any) string {
	t.Helper()
	r := s.Call(t, http.MethodPost, "/scans", key, body)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	return r.JSON()["id"].(string)
}

// Get reads path with key, which must answer 200, and returns the JSON object.
func (s *System) Get(t testing.TB, key, path string) map[string]any {
	t.Helper()
	r := s.Call(t, http.MethodGet, path, key, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	return r.JSON()
}

// Balance returns the key's organization's credit balance.
func (s *System) Balance(t testing.TB, key string) int {
	t.Helper()
	return int(s.Get(t, key, "/credits")["balance"].(float64))
}

// RequireError checks that r is the spec's JSON error body for status
// with a message (a string, or field messages) containing contains, case
// aside.
func RequireError(t testing.TB, r Response, status int, contains string) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	require.Contains(t, r.Header.Get("Content-Type"), "application/json")
	var body struct {
		StatusCode int             `json:"statusCode"`
		Error      string          `json:"error"`
		Message    json.RawMessage `json:"message"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &body), "the error body is not JSON: %s", r.Body)
	require.Equal(t, status, body.StatusCode, "%s", r.Body)
	require.Equal(t, http.StatusText(status), body.Error)
	var one string
	var many []string
	if json.Unmarshal(body.Message, &one) != nil {
		require.NoError(t, json.Unmarshal(body.Message, &many), "message is a string or an array of strings: %s", r.Body)
		one = strings.Join(many, "; ")
	}
	require.Contains(t, strings.ToLower(one), strings.ToLower(contains))
}

// WaitScanJob waits until the scan's run job has ended (completed,
// cancelled or discarded) and returns its attempt count and state.
func (s *System) WaitScanJob(t testing.TB, scanID string) (attempt int, state string) {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, s.DatabaseURL)
	require.NoError(t, err)
	defer pool.Close()
	deadline := time.Now().Add(waitFor)
	for {
		require.NoError(t, pool.QueryRow(ctx, `SELECT attempt, state FROM scan.river_job WHERE kind = 'run_scan' AND args->>'scan_id' = $1`,
			scanID).Scan(&attempt, &state))
		if state == "completed" || state == "cancelled" || state == "discarded" {
			return attempt, state
		}
		require.True(t, time.Now().Before(deadline), "the run job of scan %s is still %s after %s", scanID, state, waitFor)
		time.Sleep(100 * time.Millisecond)
	}
}

// Tail returns the last n lines of every process's log.
func (s *System) Tail(n int) string { return tail(s.Log.String(), n) }
