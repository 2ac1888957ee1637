package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/delivery"
)

// receiver is a chat, git host or tracker the integrations post to: it
// answers 200 with reply(path) (or {"ok":true}) after failing the first
// fail requests with 503; got returns the requests it accepted.
type receiver struct{ *systest.Recorder }

func newReceiver(t *testing.T, fail int, reply func(string) string) receiver {
	r := receiver{systest.NewRecorder(t, func(c systest.Call, _ int) (int, string) {
		if reply != nil {
			return http.StatusOK, reply(c.Path)
		}
		return http.StatusOK, `{"ok":true}`
	})}
	r.FailNext(fail, http.StatusServiceUnavailable)
	return r
}

func (r receiver) got() []systest.Call { return r.Succeeded() }

func addIntegration(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, err := sys.CtlRaw(env, append([]string{"integration", "add"}, args...)...)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	return m["id"].(string)
}

func TestIntegrations(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scanID := uuid.NewString()
	_, err := intake.RegisterScan(ctx(t), &findingsv1.RegisterScanRequest{ScanId: scanID, OrgId: o.ID,
		RepoUrl: "https://github.example.com/acme/hooks.git", ScanType: "pr", CommitSha: "abc123", PullRequest: 7})
	require.NoError(t, err)
	id := report(t, scanID, fnd("hook", "high"))[0]

	chat := newReceiver(t, 0, nil)
	flaky := newReceiver(t, 2, nil)
	dead := newReceiver(t, 1000, nil)
	git := newReceiver(t, 0, nil)
	jira := newReceiver(t, 0, func(p string) string {
		if p == "/rest/api/2/issue" {
			return `{"id":"10001","key":"VS-1"}`
		}
		return `{"id":"c1"}`
	})
	linear := newReceiver(t, 0, func(string) string {
		return `{"data":{"issueCreate":{"success":true,"issue":{"id":"lin-1","identifier":"ENG-1"}},"commentCreate":{"success":true}}}`
	})
	env := []string{"HOOK_SECRET=s3cret", "API_TOKEN=tok-1"}
	addIntegration(t, env, "--org", o.ID, "--kind", "slack", "--url", chat.URL+"/hook", "--secret-env", "HOOK_SECRET")
	addIntegration(t, env, "--org", o.ID, "--kind", "slack", "--url", flaky.URL+"/hook", "--name", "flaky")
	deadID := addIntegration(t, env, "--org", o.ID, "--kind", "slack", "--url", dead.URL+"/hook", "--name", "dead")
	addIntegration(t, env, "--org", o.ID, "--kind", "github", "--url", git.URL, "--token-env", "API_TOKEN")
	addIntegration(t, env, "--org", o.ID, "--kind", "jira", "--url", jira.URL, "--project", "VS", "--token-env", "API_TOKEN")
	addIntegration(t, env, "--org", o.ID, "--kind", "linear", "--url", linear.URL+"/graphql", "--project", "team-1", "--token-env", "API_TOKEN")

	out, err := sys.Ctl("integration", "list", "--org", o.ID)
	require.NoError(t, err)
	require.Len(t, out["data"], 6)
	_, err = sys.CtlRaw(nil, "integration", "add", "--org", o.ID, "--kind", "jira", "--url", jira.URL)
	require.Error(t, err, "jira needs a project")
	_, err = sys.CtlRaw(nil, "integration", "add", "--org", o.ID, "--kind", "teams", "--url", jira.URL)
	require.Error(t, err)

	require.Equal(t, 200, do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"state": "true_positive", "reason": "real"}).Status)
	require.Equal(t, 201, do(t, "POST", "/findings/"+id+"/comments", o.WriteKey, map[string]any{"comment": "fix in progress"}).Status)

	require.Eventually(t, func() bool {
		return len(chat.got()) == 2 && len(flaky.got()) == 2 && len(git.got()) == 2 && len(jira.got()) == 2 && len(linear.got()) == 2
	}, 20*time.Second, 50*time.Millisecond)

	// Signed deliveries verify; events arrive in order.
	c := chat.got()
	for _, x := range c {
		ts := x.Header.Get("X-Vulnscan-Timestamp")
		require.Equal(t, "sha256="+delivery.Sign("s3cret", ts, x.Body), x.Header.Get("X-Vulnscan-Signature"))
		require.NotEmpty(t, x.Header.Get("X-Vulnscan-Delivery"))
	}
	require.Equal(t, "finding.updated", c[0].Header.Get("X-Vulnscan-Event"))
	require.Equal(t, "finding.commented", c[1].Header.Get("X-Vulnscan-Event"))
	var msg map[string]any
	require.NoError(t, json.Unmarshal(c[0].Body, &msg))
	require.Contains(t, msg["text"], "true_positive")
	require.Empty(t, flaky.got()[0].Header.Get("X-Vulnscan-Signature"), "unsigned without a secret")

	// The flaky receiver got the first event after two failures, then the second.
	require.Equal(t, "finding.updated", flaky.got()[0].Header.Get("X-Vulnscan-Event"))
	require.Equal(t, "finding.commented", flaky.got()[1].Header.Get("X-Vulnscan-Event"))

	// Git hosting: comments on the pull request with the token.
	g := git.got()
	require.Equal(t, "/repos/acme/hooks/issues/7/comments", g[0].Path)
	require.Equal(t, "Bearer tok-1", g[0].Header.Get("Authorization"))

	// Jira: an issue first, then comments on it.
	j := jira.got()
	require.Equal(t, "/rest/api/2/issue", j[0].Path)
	require.Equal(t, "/rest/api/2/issue/VS-1/comment", j[1].Path)
	require.Contains(t, string(j[0].Body), `"key":"VS"`)

	// Linear: issueCreate, then commentCreate on the created issue.
	l := linear.got()
	require.Contains(t, string(l[0].Body), "issueCreate")
	require.Contains(t, string(l[1].Body), "commentCreate")
	require.Contains(t, string(l[1].Body), `"issueId":"lin-1"`)
	require.Equal(t, "tok-1", l[0].Header.Get("Authorization"))

	// The receiver that never recovers ends dead-lettered after its attempts.
	require.Eventually(t, func() bool {
		var n int
		err := pool.QueryRow(ctx(t), `SELECT count(*) FROM findings.outbox WHERE integration_id = $1 AND status = 'dead' AND attempts = 4`, deadID).Scan(&n)
		return err == nil && n == 1
	}, 20*time.Second, 100*time.Millisecond)
	var attempts int
	require.NoError(t, pool.QueryRow(ctx(t), `SELECT attempts FROM findings.outbox o JOIN findings.integrations i ON i.id = o.integration_id
		WHERE i.name = 'flaky' AND o.finding_id = $1 AND o.event = 'finding.updated'`, id).Scan(&attempts))
	require.Equal(t, 3, attempts)

	// Removing an integration stops its deliveries.
	out, err = sys.Ctl("integration", "remove", "--id", deadID)
	require.NoError(t, err)
	require.Equal(t, deadID, out["id"])
	out, err = sys.Ctl("integration", "list", "--org", o.ID)
	require.NoError(t, err)
	require.Len(t, out["data"], 5)
	for _, d := range out["data"].([]any) {
		require.False(t, strings.Contains(d.(map[string]any)["id"].(string), deadID))
	}
}

// A chat webhook URL is a credential: when its delivery fails, neither the
// logs, the outbox error column, the integrations table nor the operator's
// listing show it; API base URLs are shown without their query.
func TestWebhookURLsAreNeverShown(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scanID := uuid.NewString()
	_, err := intake.RegisterScan(ctx(t), &findingsv1.RegisterScanRequest{ScanId: scanID, OrgId: o.ID,
		RepoUrl: "https://github.example.com/acme/leak.git", ScanType: "full", CommitSha: "abc123"})
	require.NoError(t, err)
	id := report(t, scanID, fnd("leak", "high"))[0]

	// Nothing listens on this port: every attempt fails with an error of
	// the HTTP client, which quotes the URL it was posting to.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	const secretPath = "/services/T0001/B0002/XXXXwebhookSecretXXXX"
	hook := closed.URL + secretPath
	hookID := addIntegration(t, nil, "--org", o.ID, "--kind", "slack", "--url", hook, "--name", "leaky")
	api := closed.URL + "/jira?key=apiQuerySecret"
	addIntegration(t, nil, "--org", o.ID, "--kind", "jira", "--url", api, "--project", "VS", "--name", "leaky-jira")

	require.Equal(t, 200, do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"state": "true_positive", "reason": "real"}).Status)
	require.Eventually(t, func() bool {
		var n int
		err := pool.QueryRow(ctx(t), `SELECT count(*) FROM findings.outbox o JOIN findings.integrations i ON i.id = o.integration_id
			WHERE o.finding_id = $1 AND i.name LIKE 'leaky%' AND o.attempts >= 1 AND o.last_error IS NOT NULL`, id).Scan(&n)
		return err == nil && n == 2
	}, 20*time.Second, 50*time.Millisecond)

	secrets := []string{"XXXXwebhookSecretXXXX", "T0001", "apiQuerySecret"}
	rows, err := pool.Query(ctx(t), `SELECT o.last_error, i.url FROM findings.outbox o JOIN findings.integrations i ON i.id = o.integration_id
		WHERE o.finding_id = $1 AND i.name LIKE 'leaky%'`, id)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var lastErr, shown string
		require.NoError(t, rows.Scan(&lastErr, &shown))
		require.Contains(t, lastErr, "127.0.0.1", "the error still says where it failed")
		for _, s := range secrets {
			require.NotContains(t, lastErr, s)
			require.NotContains(t, shown, s)
		}
	}
	require.NoError(t, rows.Err())
	var sealed []byte
	require.NoError(t, pool.QueryRow(ctx(t), `SELECT url_enc FROM findings.integrations WHERE id = $1`, hookID).Scan(&sealed))
	require.NotContains(t, string(sealed), "XXXXwebhookSecretXXXX", "the webhook is stored sealed")

	out, err := sys.CtlRaw(nil, "integration", "list", "--org", o.ID)
	require.NoError(t, err)
	require.Contains(t, string(out), "REDACTED")
	logged := sys.SettledLog()
	for _, s := range secrets {
		require.NotContains(t, string(out), s)
		require.NotContains(t, logged, s)
	}
}
