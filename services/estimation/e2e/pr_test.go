package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// prBaseApp has one SQL injection.
var prBaseApp = systest.FlaskPrelude + systest.SQLInjectionRoute

// prHeadApp adds a second SQL injection above the one the base
// already has (moving it down) and edits a line on the SQL injection's
// dataflow path, so the old flaw touches the change but is not new.
var prHeadApp = systest.FlaskPrelude + systest.SQLInjection("item", "items", "id") +
	strings.Replace(systest.SQLInjectionRoute, `request.args.get("name")`, `request.args.get("name", "")`, 1)

// prRepo publishes a Flask application with one flaw on main (and enough
// code for its full scan to cost 2 credits) and a branch "feature" that adds
// a second flaw; it returns the repository URL and the base commit.
func prRepo(t *testing.T, name string) (string, string) {
	t.Helper()
	var filler strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&filler, "VALUE_%d = %d\n", i, i)
	}
	base := git.Publish(t, name, map[string]string{"app.py": prBaseApp, "requirements.txt": "flask==3.0.0\n", "lib/constants.py": filler.String()})
	git.Commit(t, name, "feature", map[string]string{"app.py": prHeadApp})
	return git.url("", name), base
}

type prFinding struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Category     string `json:"category"`
	Severity     string `json:"severity"`
	AffectedFile string `json:"affected_file"`
	Line         int    `json:"line"`
	ScanType     string `json:"scan_type"`
}

// scanAndWait starts a scan of the estimation's branch and waits for it to end.
func scanAndWait(t *testing.T, key, estimationID, url, branch string) (string, []prFinding) {
	t.Helper()
	r := do(t, "POST", "/scans", key, map[string]any{"cost_estimation_id": estimationID,
		"repos": []map[string]any{{"source": "public", "url": url, "branch": branch}}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	id := r.JSON()["id"].(string)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		st := do(t, "GET", "/scans/"+id+"/status", key, nil).JSON()["status"]
		if st == "completed" {
			break
		}
		require.NotEqual(t, "failed", st, string(do(t, "GET", "/scans/"+id, key, nil).Body))
		require.True(t, time.Now().Before(deadline), "scan %s still %v", id, st)
		time.Sleep(300 * time.Millisecond)
	}
	r = do(t, "GET", "/scans/"+id+"/findings?limit=100", key, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var list struct {
		Data []prFinding `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &list))
	return id, list.Data
}

// TestPullRequestScan: a pull request whose head adds one flaw to a
// repository that already has another reports exactly the new one, as a
// "pr" finding, costs less than the full scan (and at least 1 credit), and
// posts one review comment on the flaw's line and one summary to the git host.
func TestPullRequestScan(t *testing.T) {
	t.Parallel()
	url, base := prRepo(t, "acme/pr-app")

	// The whole head, scanned in full (in another organization, so its
	// findings are not known to the first): both flaws are there.
	other := newOrg(t)
	fullElsewhere := estimate(t, other.WriteKey, repo{"source": "public", "repo_url": url, "branch": "feature"})
	require.Equal(t, "completed", fullElsewhere.Status)
	_, headFindings := scanAndWait(t, other.WriteKey, fullElsewhere.ID, url, "feature")
	require.GreaterOrEqual(t, len(headFindings), 2, "the head has the old and the new flaw: %+v", headFindings)
	var injections []prFinding
	for _, f := range headFindings {
		if f.Category == "injection" {
			injections = append(injections, f)
		}
	}
	require.Len(t, injections, 2, "%+v", headFindings)
	lines := []int{injections[0].Line, injections[1].Line}
	require.ElementsMatch(t, []int{13, 21}, lines, "the new flaw at 13, the old one (moved down, its source line edited) at 21")

	org := newOrg(t)
	host := newHostAPI(t)
	_, err := sys.CtlRaw([]string{"HOST_TOKEN=tok-pr"}, "integration", "add", "--org", org.ID, "--kind", "github",
		"--url", host.URL, "--token-env", "HOST_TOKEN")
	require.NoError(t, err)

	full := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": url, "branch": "feature"})
	require.Equal(t, "completed", full.Status)
	require.Equal(t, 2, full.TotalCredits)

	r := do(t, "POST", "/cost-estimations", org.WriteKey, map[string]any{"repos": []map[string]any{{"source": "public", "repo_url": url,
		"branch": "feature", "base_branch": "main", "pull_request": 42}}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	prID := r.JSON()["id"].(string)
	wait(t, org.WriteKey, prID, time.Minute)
	var pr struct {
		Status       string `json:"status"`
		TotalCredits int    `json:"total_credits"`
		Repos        []struct {
			BaseBranch  string `json:"base_branch"`
			BaseCommit  string `json:"base_commit"`
			PullRequest int    `json:"pull_request"`
			CommitSHA   string `json:"commit_sha"`
		} `json:"repos"`
		RepoResults []struct {
			ScanType     string `json:"scan_type"`
			BaseBranch   string `json:"base_branch"`
			BaseCommit   string `json:"base_commit"`
			ChangedFiles int    `json:"changed_files"`
			ChangedLines int    `json:"changed_lines"`
			Credits      int    `json:"credits"`
			Error        string `json:"error"`
		} `json:"repo_results"`
	}
	require.NoError(t, json.Unmarshal(do(t, "GET", "/cost-estimations/"+prID, org.WriteKey, nil).Body, &pr))
	require.Equal(t, "completed", pr.Status, "%+v", pr)
	res := pr.RepoResults[0]
	require.Equal(t, "pr", res.ScanType)
	require.Equal(t, "main", res.BaseBranch)
	require.Equal(t, base, res.BaseCommit)
	require.Equal(t, base, pr.Repos[0].BaseCommit)
	require.Equal(t, 42, pr.Repos[0].PullRequest)
	require.Equal(t, 1, res.ChangedFiles)
	require.Equal(t, 10, res.ChangedLines, "eight lines added, one modified (one deleted, one added)")
	// The documented rule: 1 + changed_lines/1000, at least 1, below the full scan's price.
	require.Equal(t, 1, pr.TotalCredits)
	require.Less(t, pr.TotalCredits, full.TotalCredits)

	before := do(t, "GET", "/credits", org.WriteKey, nil).JSON()["balance"].(float64)
	scanID, found := scanAndWait(t, org.WriteKey, prID, url, "feature")
	after := do(t, "GET", "/credits", org.WriteKey, nil).JSON()["balance"].(float64)
	require.Equal(t, float64(pr.TotalCredits), before-after, "a PR scan debits the PR estimation's credits")

	require.Len(t, found, 1, "only the new flaw is reported: %+v", found)
	newFlaw := found[0]
	require.Equal(t, "injection", newFlaw.Category)
	require.Equal(t, "app.py", newFlaw.AffectedFile)
	require.Equal(t, 13, newFlaw.Line, "the new query's execution")
	detail := do(t, "GET", "/findings/"+newFlaw.ID, org.WriteKey, nil).JSON()
	require.Equal(t, "pr", detail["scan_type"])
	require.Equal(t, "pr", do(t, "GET", "/scans/"+scanID, org.WriteKey, nil).JSON()["scan_type"])

	// Back into the pull request: one review comment on the new flaw's line
	// of the head commit, and one summary on the pull request.
	require.Eventually(t, func() bool { return len(host.Succeeded()) >= 2 }, 60*time.Second, 100*time.Millisecond)
	// Exactly two events were queued for the scan, and both were delivered.
	pool, err := pgxpool.New(context.Background(), sys.DatabaseURL)
	require.NoError(t, err)
	defer pool.Close()
	require.Eventually(t, func() bool {
		var total, delivered int
		err := pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE status = 'delivered')
			FROM findings.outbox WHERE scan_id = $1`, scanID).Scan(&total, &delivered)
		require.NoError(t, err)
		require.LessOrEqual(t, total, 2)
		return total == 2 && delivered == 2
	}, 60*time.Second, 100*time.Millisecond)
	calls := host.Succeeded()
	require.Len(t, calls, 2, "%+v", calls)
	var review, summary *systest.Call
	for i := range calls {
		switch calls[i].Path {
		case "/repos/acme/pr-app/pulls/42/comments":
			review = &calls[i]
		case "/repos/acme/pr-app/issues/42/comments":
			summary = &calls[i]
		}
	}
	require.NotNil(t, review, "%+v", calls)
	require.NotNil(t, summary, "%+v", calls)
	require.Equal(t, "app.py", review.JSON()["path"])
	require.Equal(t, float64(13), review.JSON()["line"])
	require.Equal(t, "RIGHT", review.JSON()["side"])
	require.Equal(t, pr.Repos[0].CommitSHA, review.JSON()["commit_id"])
	require.Contains(t, review.JSON()["body"], newFlaw.Title)
	require.Contains(t, review.JSON()["body"], "/v1/findings/"+newFlaw.ID)
	body := summary.JSON()["body"].(string)
	require.Contains(t, body, "1 new finding")
	require.Contains(t, body, newFlaw.Severity+": 1")
	require.Contains(t, body, "/v1/findings/"+newFlaw.ID)
}

// TestPullRequestValidation: bad pull request fields are refused with a 400
// naming the field; what only the repository can tell fails the entry with
// its error, as an unknown branch does.
func TestPullRequestValidation(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	url, base := prRepo(t, "acme/pr-validate")
	offMain := git.Commit(t, "acme/pr-validate", "unrelated", map[string]string{"other.py": "x = 1\n"})
	up := upload(t, org.WriteKey, "application/zip", zipEntries(t, map[string]string{"app.py": prBaseApp}, nil))
	for _, tc := range []struct {
		name  string
		entry map[string]any
		field string
	}{
		{"base_commit without base_branch", map[string]any{"source": "public", "repo_url": url, "branch": "feature", "base_commit": base}, "repos[0].base_commit"},
		{"pull_request without base_branch", map[string]any{"source": "public", "repo_url": url, "branch": "feature", "pull_request": 3}, "repos[0].pull_request"},
		{"malformed base_commit", map[string]any{"source": "public", "repo_url": url, "branch": "feature", "base_branch": "main", "base_commit": "abc"}, "repos[0].base_commit"},
		{"base equal to head", map[string]any{"source": "public", "repo_url": url, "branch": "feature", "base_branch": "feature"}, "repos[0].base_branch"},
		{"invalid base branch name", map[string]any{"source": "public", "repo_url": url, "branch": "feature", "base_branch": "a..b"}, "repos[0].base_branch"},
		{"negative pull request", map[string]any{"source": "public", "repo_url": url, "branch": "feature", "base_branch": "main", "pull_request": -1}, "repos[0].pull_request"},
		{"upload with a base", map[string]any{"source": "upload", "repo_url": up.RepoURL, "base_branch": "main"}, "repos[0].base_branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "POST", "/cost-estimations", org.WriteKey, map[string]any{"repos": []map[string]any{tc.entry}})
			require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
			require.Contains(t, r.JSON()["message"], tc.field)
		})
	}

	for _, tc := range []struct {
		name  string
		entry repo
		error string
	}{
		{"unknown base branch", repo{"source": "public", "repo_url": url, "branch": "feature", "base_branch": "nope"}, `base branch "nope" not found in the repository`},
		{"base_commit not on base_branch", repo{"source": "public", "repo_url": url, "branch": "feature", "base_branch": "main",
			"base_commit": offMain}, "is not in the history of base branch"},
		{"empty change", repo{"source": "public", "repo_url": url, "branch": "main", "base_branch": "feature"}, "the change is empty"},
		{"base is the default branch being scanned", repo{"source": "public", "repo_url": url, "base_branch": "main"}, `base branch "main" is the branch being scanned`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := estimate(t, org.WriteKey, tc.entry)
			require.Equal(t, "failed", e.Status)
			require.Contains(t, e.RepoResults[0].Error, tc.error)
		})
	}

	// A base commit in the base branch's history is accepted and is the base.
	e := estimate(t, org.WriteKey, repo{"source": "public", "repo_url": url, "branch": "feature", "base_branch": "main", "base_commit": base})
	require.Equal(t, "completed", e.Status, "%+v", e.RepoResults)
	require.Equal(t, 1, e.TotalCredits)
}
