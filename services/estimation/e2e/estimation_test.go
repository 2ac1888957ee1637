package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
)

var hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

func TestPublicRepository(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	sha := git.PublishDir(t, "pub-go", filepath.Join(fixtures, "go-gin"))
	featureSHA := git.Commit(t, "pub-go", "feature", map[string]string{"extra.go": "package main\n\nfunc extra() {}\n"})
	url := git.url("", "pub-go")

	e := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": url})
	require.Equal(t, "completed", e.Status)
	require.Len(t, e.RepoResults, 1)
	rr := e.RepoResults[0]
	require.Equal(t, "completed", rr.Status)
	require.Equal(t, "main", rr.Branch)
	require.Equal(t, sha, rr.CommitSHA)
	require.False(t, rr.FromCache)
	require.Equal(t, []app{{"orders", ".", "Go 1.22 Gin web service using GORM on PostgreSQL"}}, rr.Applications)
	require.GreaterOrEqual(t, rr.Credits, 1)
	require.Equal(t, rr.Credits, e.TotalCredits)
	require.Equal(t, sha, e.Repos[0].CommitSHA)
	require.Equal(t, "main", e.Repos[0].Branch)
	require.Equal(t, org.ID, e.OrganizationID)

	// The same commit again: the detection is reused without cloning.
	again := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": url, "branch": "main"})
	require.True(t, again.RepoResults[0].FromCache)
	require.Equal(t, sha, again.RepoResults[0].CommitSHA)
	require.Equal(t, rr.Applications, again.RepoResults[0].Applications)
	require.Equal(t, e.TotalCredits, again.TotalCredits)

	// Another branch is another commit.
	feat := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": url, "branch": "feature"})
	require.Equal(t, "completed", feat.Status)
	require.Equal(t, featureSHA, feat.RepoResults[0].CommitSHA)
	require.Equal(t, "feature", feat.RepoResults[0].Branch)
	require.False(t, feat.RepoResults[0].FromCache)

	// Terminal records never change.
	r := do(t, "GET", "/cost-estimations/"+e.ID, org.ReadKey, nil)
	require.Equal(t, http.StatusOK, r.Status)
	var again2 estimation
	require.NoError(t, json.Unmarshal(r.Body, &again2))
	require.Equal(t, e, again2)
}

func TestConnectedRepository(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	sha := git.PublishDir(t, "conn-flask", filepath.Join(fixtures, "python-flask"))
	url := "https://git.example.com/acme/flask-" + uuid.NewString()[:8]
	_, err := sys.CtlRaw([]string{"REPO_TOKEN=" + privateToken}, "repo", "connect", "--org", org.ID, "--url", url,
		"--clone-url", git.url("private", "conn-flask"), "--token-env", "REPO_TOKEN")
	require.NoError(t, err)
	badURL := "https://git.example.com/acme/flask-bad-" + uuid.NewString()[:8]
	_, err = sys.CtlRaw([]string{"REPO_TOKEN=wrong"}, "repo", "connect", "--org", org.ID, "--url", badURL,
		"--clone-url", git.url("private", "conn-flask"), "--token-env", "REPO_TOKEN")
	require.NoError(t, err)

	e := estimate(t, org.WriteKey, repo{"source": "connected", "repo_url": url}, repo{"source": "connected", "repo_url": badURL})
	require.Equal(t, "partial", e.Status)
	require.Equal(t, "completed", e.RepoResults[0].Status, e.RepoResults[0].Error)
	require.Equal(t, sha, e.RepoResults[0].CommitSHA)
	require.Equal(t, "main", e.RepoResults[0].Branch)
	require.Equal(t, []app{{"conn-flask", ".", "Python 3 Flask web application using SQLAlchemy on PostgreSQL"}}[0].Architecture,
		e.RepoResults[0].Applications[0].Architecture)
	require.Equal(t, "failed", e.RepoResults[1].Status)
	require.Contains(t, e.RepoResults[1].Error, "not accessible")
	require.Zero(t, e.RepoResults[1].Credits)
	require.Equal(t, e.RepoResults[0].Credits, e.TotalCredits)

	// An anonymous clone of the same private repository fails.
	pub := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": git.url("private", "conn-flask")})
	require.Equal(t, "failed", pub.Status)
	require.Zero(t, pub.TotalCredits)

	// The scan worker gets the clone URL, credentials and commit.
	cc, err := sys.Dial("estimation", mtls.Scan, false)
	require.NoError(t, err)
	defer cc.Close()
	src, err := estimationv1.NewEstimationInternalServiceClient(cc).GetRepoSources(context.Background(),
		&estimationv1.GetRepoSourcesRequest{OrgId: org.ID, Id: e.ID})
	require.NoError(t, err)
	require.Len(t, src.GetSources(), 2)
	s0 := src.GetSources()[0]
	require.Equal(t, git.url("private", "conn-flask"), s0.GetCloneUrl())
	require.Equal(t, privateToken, s0.GetPassword())
	require.Equal(t, sha, s0.GetCommitSha())
	require.Equal(t, "completed", s0.GetStatus())
}

func TestFailuresAndNonPublicAddresses(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	git.PublishDir(t, "fail-node", filepath.Join(fixtures, "node-express"))
	git.PublishDir(t, "fail-redirect", filepath.Join(fixtures, "node-express"))
	git.PublishDir(t, "fail-docs", filepath.Join(fixtures, "docs-only"))

	e := estimate(t, org.WriteKey,
		repo{"source": "public", "repo_url": git.url("", "fail-node")},
		repo{"source": "public", "repo_url": git.url("", "does-not-exist")},
		repo{"source": "public", "repo_url": git.url("", "fail-node"), "branch": "no-such-branch"},
		repo{"source": "public", "repo_url": git.url("redirect", "fail-redirect")},
		repo{"source": "public", "repo_url": git.url("", "fail-docs")},
	)
	require.Equal(t, "partial", e.Status)
	require.Len(t, e.RepoResults, 5)
	require.Equal(t, "completed", e.RepoResults[0].Status)
	require.Equal(t, "failed", e.RepoResults[1].Status)
	require.Contains(t, e.RepoResults[1].Error, "not found")
	require.Equal(t, "failed", e.RepoResults[2].Status)
	require.Contains(t, e.RepoResults[2].Error, `branch "no-such-branch" not found`)
	require.Equal(t, "failed", e.RepoResults[3].Status)
	require.Contains(t, e.RepoResults[3].Error, "non-public address")
	require.Equal(t, "completed", e.RepoResults[4].Status)
	require.Empty(t, e.RepoResults[4].Applications)
	require.Zero(t, e.RepoResults[4].Credits)
	require.Equal(t, e.RepoResults[0].Credits, e.TotalCredits)

	f := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": git.url("redirect", "fail-redirect")})
	require.Equal(t, "failed", f.Status)
	require.Zero(t, f.TotalCredits)
}

func TestValidation(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	other := newOrg(t)
	up := upload(t, other.WriteKey, "application/zip", zipOf(t, filepath.Join(fixtures, "go-gin")))
	many := make([]repo, 21)
	for i := range many {
		many[i] = repo{"source": "public", "repo_url": "https://github.com/a/b"}
	}
	tests := []struct {
		name string
		body any
		msg  string
	}{
		{"no repos", map[string]any{"repos": []repo{}}, "repos must contain at least one"},
		{"missing repos", map[string]any{}, "repos must contain at least one"},
		{"too many", map[string]any{"repos": many}, "at most 20"},
		{"bad source", map[string]any{"repos": []repo{{"source": "ftp", "repo_url": "https://github.com/a/b"}}}, "repos[0].source must be one of"},
		{"missing source", map[string]any{"repos": []repo{{"repo_url": "https://github.com/a/b"}}}, "repos[0].source"},
		{"missing url", map[string]any{"repos": []repo{{"source": "public"}}}, "repos[0].repo_url is required"},
		{"http url", map[string]any{"repos": []repo{{"source": "public", "repo_url": "http://github.com/a/b"}}}, "repos[0].repo_url must use https"},
		{"credentials", map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://u:p@github.com/a/b"}}}, "credentials"},
		{"private ip", map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://10.1.2.3/a/b"}}}, "non-public address"},
		{"metadata ip", map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://169.254.169.254/a"}}}, "non-public address"},
		{"bad branch", map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://github.com/a/b", "branch": "a..b"}}}, "repos[0].branch"},
		{"commit given", map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://github.com/a/b", "commit_sha": "abc"}}}, "commit_sha"},
		{"upload url", map[string]any{"repos": []repo{{"source": "upload", "repo_url": "https://github.com/a/b"}}}, "upload://"},
		{"foreign upload", map[string]any{"repos": []repo{{"source": "upload", "repo_url": up.RepoURL}}}, "not an upload of the organization"},
		{"not connected", map[string]any{"repos": []repo{{"source": "connected", "repo_url": "https://github.com/a/unconnected"}}}, "not a connected repository"},
		{"unknown field", map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://github.com/a/b"}}, "colour": 1}, "colour"},
		{"unknown repo field", map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://github.com/a/b", "colour": "x"}}}, "colour"},
		{"long name", map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://github.com/a/b"}}, "name": strings.Repeat("n", 201)}, "name"},
		{"malformed", `{"repos": [`, "Malformed JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, "POST", "/cost-estimations", org.WriteKey, tt.body)
			require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
			require.Contains(t, fmt.Sprint(r.JSON()["message"]), tt.msg)
			require.EqualValues(t, 400, r.JSON()["statusCode"])
		})
	}
	r := do(t, "POST", "/cost-estimations", org.ReadKey, map[string]any{"repos": []repo{{"source": "public", "repo_url": "https://github.com/a/b"}}})
	require.Equal(t, http.StatusForbidden, r.Status)
	r = do(t, "POST", "/cost-estimations", "", map[string]any{})
	require.Equal(t, http.StatusUnauthorized, r.Status)
	for _, q := range []string{"limit=0", "limit=101", "limit=-1", "offset=-1", "limit=abc"} {
		r := do(t, "GET", "/cost-estimations?"+q, org.ReadKey, nil)
		require.Equal(t, http.StatusBadRequest, r.Status, q)
		require.Contains(t, fmt.Sprint(r.JSON()["message"]), strings.Split(q, "=")[0], q)
	}
	r = do(t, "GET", "/cost-estimations/not-a-uuid", org.ReadKey, nil)
	require.Equal(t, http.StatusBadRequest, r.Status)
	r = do(t, "GET", "/cost-estimations/"+uuid.NewString(), org.ReadKey, nil)
	require.Equal(t, http.StatusNotFound, r.Status)
}

func TestListAndVisibility(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	other := newOrg(t)
	git.PublishDir(t, "list-rust", filepath.Join(fixtures, "rust-axum"))
	var ids []string
	for range 3 {
		ids = append(ids, create(t, org.WriteKey, repo{"source": "public", "repo_url": git.url("", "list-rust")}).ID)
		time.Sleep(5 * time.Millisecond)
	}
	type page struct {
		Data  []estimation `json:"data"`
		Total int          `json:"total"`
	}
	get := func(key, q string) page {
		r := do(t, "GET", "/cost-estimations"+q, key, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var p page
		require.NoError(t, json.Unmarshal(r.Body, &p))
		return p
	}
	p := get(org.ReadKey, "")
	require.Equal(t, 3, p.Total)
	require.Equal(t, []string{ids[2], ids[1], ids[0]}, []string{p.Data[0].ID, p.Data[1].ID, p.Data[2].ID})
	p = get(org.ReadKey, "?limit=2")
	require.Len(t, p.Data, 2)
	require.Equal(t, 3, p.Total)
	require.Equal(t, ids[2], p.Data[0].ID)
	p = get(org.ReadKey, "?limit=2&offset=2")
	require.Len(t, p.Data, 1)
	require.Equal(t, ids[0], p.Data[0].ID)
	p = get(org.ReadKey, "?offset=10")
	require.Empty(t, p.Data)
	require.Equal(t, 3, p.Total)

	p = get(other.ReadKey, "")
	require.Zero(t, p.Total)
	require.Empty(t, p.Data)
	r := do(t, "GET", "/cost-estimations/"+ids[0], other.ReadKey, nil)
	require.Equal(t, http.StatusNotFound, r.Status)
	require.Equal(t, "Cost estimation not found", r.JSON()["message"])
	for _, id := range ids {
		wait(t, org.ReadKey, id, 60*time.Second)
	}
}

func TestClaims(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	git.PublishDir(t, "claim-php", filepath.Join(fixtures, "php-laravel"))
	e := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": git.url("", "claim-php")})
	require.Equal(t, "completed", e.Status)
	empty := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": git.url("", "missing-repo")})

	cc, err := sys.Dial("estimation", mtls.Scan, false)
	require.NoError(t, err)
	defer cc.Close()
	ic := estimationv1.NewEstimationInternalServiceClient(cc)
	ctx := context.Background()
	scanA, scanB := uuid.NewString(), uuid.NewString()
	claim := func(orgID, id, scan string) (*estimationv1.ClaimEstimationResponse, error) {
		return ic.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: orgID, Id: id, ScanId: scan})
	}
	release := func(scan string) (*estimationv1.ReleaseEstimationResponse, error) {
		return ic.ReleaseEstimation(ctx, &estimationv1.ReleaseEstimationRequest{OrgId: org.ID, Id: e.ID, ScanId: scan})
	}

	res, err := claim(org.ID, e.ID, scanA)
	require.NoError(t, err)
	require.True(t, res.GetNewlyClaimed())
	res, err = claim(org.ID, e.ID, scanA)
	require.NoError(t, err)
	require.False(t, res.GetNewlyClaimed())
	_, err = claim(org.ID, e.ID, scanB)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	require.Contains(t, status.Convert(err).Message(), "already been claimed")
	got, err := ic.GetEstimation(ctx, &estimationv1.GetEstimationRequest{OrgId: org.ID, Id: e.ID})
	require.NoError(t, err)
	require.Equal(t, scanA, got.GetClaimedByScanId())
	require.Equal(t, int32(e.TotalCredits), got.GetEstimation().GetTotalCredits())

	rel, err := release(scanB)
	require.NoError(t, err)
	require.False(t, rel.GetReleased())
	rel, err = release(scanA)
	require.NoError(t, err)
	require.True(t, rel.GetReleased())
	_, err = claim(org.ID, e.ID, scanB)
	require.NoError(t, err)

	_, err = claim(org.ID, empty.ID, scanA)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	require.Contains(t, status.Convert(err).Message(), "Cost estimation has no credits")
	_, err = claim(newOrg(t).ID, e.ID, scanA)
	require.Equal(t, codes.NotFound, status.Code(err))

	// Concurrent claims by different scans: exactly one wins.
	e2 := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": git.url("", "claim-php")})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := claim(org.ID, e2.ID, uuid.NewString())
			errs <- err
		}()
	}
	wins := 0
	for range 8 {
		if <-errs == nil {
			wins++
		}
	}
	require.Equal(t, 1, wins)
}

// TestCrashRecovery kills the estimation service in the middle of a clone;
// the job survives in the queue and the estimation still completes.
// It does not run in parallel: the other tests would see the service down.
func TestCrashRecovery(t *testing.T) {
	org := newOrg(t)
	sha := git.PublishDir(t, "crash-ruby", filepath.Join(fixtures, "ruby-rails"))
	e := create(t, org.WriteKey, repo{"source": "public", "repo_url": git.url("slow", "crash-ruby")})
	select {
	case <-git.slowHit:
	case <-time.After(30 * time.Second):
		t.Fatal("the clone never started")
	}
	require.NoError(t, sys.Kill("estimation"))
	close(git.release)
	require.NoError(t, sys.Restart("estimation"))
	deadline := time.Now().Add(60 * time.Second)
	for do(t, "GET", "/cost-estimations?limit=1", org.ReadKey, nil).Status != http.StatusOK {
		require.True(t, time.Now().Before(deadline), "estimation service did not come back")
		time.Sleep(200 * time.Millisecond)
	}
	done := wait(t, org.ReadKey, e.ID, 150*time.Second)
	require.Equal(t, "completed", done.Status, done.RepoResults)
	require.Equal(t, sha, done.RepoResults[0].CommitSHA)
	require.NotEmpty(t, done.RepoResults[0].Applications)
}
