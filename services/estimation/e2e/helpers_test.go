package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

const fixtures = "../internal/detect/testdata"

type app struct {
	AppName      string `json:"app_name"`
	AppRootPath  string `json:"app_root_path"`
	Architecture string `json:"architecture"`
}

type repoResult struct {
	RepoURL      string `json:"repo_url"`
	Branch       string `json:"branch"`
	CommitSHA    string `json:"commit_sha"`
	Status       string `json:"status"`
	FromCache    bool   `json:"from_cache"`
	Credits      int    `json:"credits"`
	Applications []app  `json:"applications"`
	Error        string `json:"error"`
}

type estimation struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organization_id"`
	UserID         string `json:"user_id"`
	TaskID         string `json:"task_id"`
	Status         string `json:"status"`
	Repos          []struct {
		Source    string `json:"source"`
		RepoURL   string `json:"repo_url"`
		Branch    string `json:"branch"`
		CommitSHA string `json:"commit_sha"`
	} `json:"repos"`
	TotalCredits int          `json:"total_credits"`
	RepoResults  []repoResult `json:"repo_results"`
	CreatedAt    string       `json:"created_at"`
}

func newOrg(t *testing.T) systest.Org {
	t.Helper()
	return sys.Org(t, 100)
}

func do(t *testing.T, method, path, key string, body any) systest.Response {
	t.Helper()
	return sys.Call(t, method, path, key, body)
}

type repo map[string]string

func create(t *testing.T, key string, repos ...repo) estimation {
	t.Helper()
	r := do(t, "POST", "/cost-estimations", key, map[string]any{"repos": repos, "name": "test"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var e estimation
	require.NoError(t, json.Unmarshal(r.Body, &e))
	require.Contains(t, []string{"pending", "running"}, e.Status)
	require.NotEmpty(t, e.TaskID)
	return e
}

func wait(t *testing.T, key, id string, d time.Duration) estimation {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := do(t, "GET", "/cost-estimations/"+id, key, nil)
		if r.Status == http.StatusServiceUnavailable && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond) // the service is restarting
			continue
		}
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var e estimation
		require.NoError(t, json.Unmarshal(r.Body, &e))
		if e.Status == "completed" || e.Status == "partial" || e.Status == "failed" {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("estimation %s still %s after %s", id, e.Status, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func estimate(t *testing.T, key string, repos ...repo) estimation {
	t.Helper()
	e := create(t, key, repos...)
	return wait(t, key, e.ID, 60*time.Second)
}
