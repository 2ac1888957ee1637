package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/inbound"
)

// newGitHost answers comment posts like a git host: each created comment
// gets the next id, from first on.
func newGitHost(t *testing.T, first int64) receiver {
	return receiver{systest.NewRecorder(t, func(_ systest.Call, n int) (int, string) {
		return http.StatusCreated, fmt.Sprintf(`{"id":%d,"body":"…"}`, first+int64(n))
	})}
}

// postRaw sends an unauthenticated request to the gateway.
func postRaw(t *testing.T, path string, hdr map[string]string, body []byte) systest.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, sys.BaseURL+path, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return systest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// githubEvent is a signed git host webhook.
type githubEvent struct {
	event, delivery string
	body            []byte
}

func ghEvent(t *testing.T, event string, payload any) githubEvent {
	b, err := json.Marshal(payload)
	require.NoError(t, err)
	return githubEvent{event: event, delivery: uuid.NewString(), body: b}
}

func (e githubEvent) send(t *testing.T, integ, secret string) systest.Response {
	t.Helper()
	return postRaw(t, "/integrations/"+integ+"/events/github", map[string]string{
		"Content-Type": "application/json", "X-GitHub-Event": e.event, "X-GitHub-Delivery": e.delivery,
		"X-Hub-Signature-256": "sha256=" + inbound.GitHubSign(secret, e.body)}, e.body)
}

// slackRequest is a signed chat request.
type slackRequest struct {
	ts   string
	body []byte
}

func slackForm(kv ...string) slackRequest {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return slackRequest{ts: strconv.FormatInt(time.Now().Unix(), 10), body: []byte(v.Encode())}
}

func (s slackRequest) send(t *testing.T, integ, secret string) systest.Response {
	t.Helper()
	return postRaw(t, "/integrations/"+integ+"/events/slack", map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": s.ts,
		"X-Slack-Signature": "v0=" + inbound.SlackSign(secret, s.ts, s.body)}, s.body)
}

func comment(id int64, body string, replyTo int64, login string) map[string]any {
	c := map[string]any{"id": id, "body": body, "user": map[string]any{"login": login}}
	if replyTo != 0 {
		c["in_reply_to_id"] = replyTo
	}
	return map[string]any{"action": "created", "comment": c, "sender": map[string]any{"login": login}}
}

// outboxCount counts a finding's outbox events per integration.
func outboxCount(t *testing.T, finding string) map[string]int {
	t.Helper()
	evs, err := storeOutbox(t, finding)
	require.NoError(t, err)
	out := map[string]int{}
	for _, e := range evs {
		out[e]++
	}
	return out
}

func storeOutbox(t *testing.T, finding string) ([]string, error) {
	rows, err := pool.Query(ctx(t), `SELECT integration_id::text FROM findings.outbox WHERE finding_id = $1`, finding)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func thread(t *testing.T, key, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range get(t, key, id)["triage_thread"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// The git host's and the chat's signed events reach the triage thread with
// their source, state commands and reactions change the finding as PATCH
// does (audit trail, propagation to the other integrations, none back to
// the origin), and bad signatures, replays, stale requests, unknown
// integrations and unknown findings are refused without changing anything.
func TestInboundEvents(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	other := newOrg(t, "auto")
	scanID := uuid.NewString()
	_, err := intake.RegisterScan(ctx(t), &findingsv1.RegisterScanRequest{ScanId: scanID, OrgId: o.ID,
		RepoUrl: "https://github.example.com/acme/inbound.git", ScanType: "pr", CommitSha: "abc123", PullRequest: 9})
	require.NoError(t, err)
	ids := report(t, scanID, fnd("inb-1", "high"), fnd("inb-2", "medium"))
	f1, f2 := ids[0], ids[1]
	foreign := report(t, newScan(t, other, "https://github.example.com/other/repo.git"), fnd("inb-x", "low"))[0]

	git := newGitHost(t, 9001)
	chat := newReceiver(t, 0, nil)
	jira := newReceiver(t, 0, func(p string) string {
		if p == "/rest/api/2/issue" {
			return `{"id":"10001","key":"IN-1"}`
		}
		return `{"id":"c1"}`
	})
	const ghSecret = "github-inbound-secret-0001"
	ghID := addIntegration(t, []string{"GH_INBOUND=" + ghSecret}, "--org", o.ID, "--kind", "github", "--url", git.URL, "--inbound-secret-env", "GH_INBOUND")
	out, err := sys.CtlRaw(nil, "integration", "add", "--org", o.ID, "--kind", "slack", "--url", chat.URL+"/hook")
	require.NoError(t, err)
	var slackInteg map[string]any
	require.NoError(t, json.Unmarshal(out, &slackInteg))
	slackID := slackInteg["id"].(string)
	slackSecret, _ := slackInteg["inbound_secret"].(string)
	require.True(t, strings.HasPrefix(slackSecret, "vsin_"), "a generated inbound secret is shown once: %s", out)
	require.Equal(t, true, slackInteg["has_inbound_secret"])
	jiraID := addIntegration(t, nil, "--org", o.ID, "--kind", "jira", "--url", jira.URL, "--project", "IN")

	// Ann is a user of the organization known to both integrations.
	ann, err := sys.Ctl("user", "create", "--org", o.ID, "--username", "ann")
	require.NoError(t, err)
	annID := ann["user_id"].(string)
	m, err := sys.Ctl("integration", "map-user", "--id", ghID, "--external-user", "OctoAnn", "--user", annID)
	require.NoError(t, err)
	require.Equal(t, "octoann", m["external_user"])
	require.Equal(t, "ann", m["username"])
	_, err = sys.Ctl("integration", "map-user", "--id", slackID, "--external-user", "U0ANN", "--user", annID)
	require.NoError(t, err)
	_, err = sys.Ctl("integration", "map-user", "--id", slackID, "--external-user", "U0X", "--user", other.UserID)
	require.Error(t, err, "a user of another organization cannot be mapped")
	_, err = sys.Ctl("integration", "map-user", "--id", jiraID, "--external-user", "x", "--user", annID)
	require.Error(t, err, "an issue tracker receives no events")

	// The integration comments on the pull request; the git host's answer
	// (comment 9001) is remembered for the finding.
	require.Equal(t, 201, do(t, "POST", "/findings/"+f1+"/comments", o.WriteKey, map[string]any{"comment": "please look"}).Status)
	require.Eventually(t, func() bool {
		var n int
		err := pool.QueryRow(ctx(t), `SELECT count(*) FROM findings.integration_refs WHERE integration_id = $1 AND ref = 'comment:9001' AND finding_id = $2`,
			ghID, f1).Scan(&n)
		return err == nil && n == 1
	}, 20*time.Second, 50*time.Millisecond)

	t.Run("ping", func(t *testing.T) {
		r := ghEvent(t, "ping", map[string]any{"zen": "Keep it logically awesome."}).send(t, ghID, ghSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "pong", r.JSON()["status"])
	})

	t.Run("the integration's own comment coming back is ignored", func(t *testing.T) {
		n := len(thread(t, o.ReadKey, f1))
		// The git host sends every new comment to the webhook, the
		// integration's own too (comment 9001): even when it names the
		// finding it is not read as a user's comment.
		r := ghEvent(t, "issue_comment", comment(9001, "> finding "+f1+"\n\nplease look", 0, "vulnscan-bot")).send(t, ghID, ghSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "ignored", r.JSON()["status"])
		require.Len(t, thread(t, o.ReadKey, f1), n)
	})

	var replay githubEvent
	t.Run("signed comment from an unmapped user", func(t *testing.T) {
		before := outboxCount(t, f1)
		replay = ghEvent(t, "pull_request_review_comment", comment(501, "only reachable from tests", 9001, "Stranger"))
		r := replay.send(t, ghID, ghSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "recorded", r.JSON()["status"])
		require.Equal(t, f1, r.JSON()["finding_id"])
		th := thread(t, o.ReadKey, f1)
		last := th[len(th)-1]
		require.Equal(t, "github", last["source"])
		require.Equal(t, "only reachable from tests", last["comment"])
		require.Nil(t, last["reaction"])
		require.Equal(t, "Stranger", last["username"])
		require.Equal(t, "00000000-0000-0000-0000-000000000000", last["user_id"])
		require.Equal(t, r.JSON()["entry_id"], last["id"])
		// The comment goes to the other integrations, not back to the git host.
		after := outboxCount(t, f1)
		require.Equal(t, before[ghID], after[ghID])
		require.Equal(t, before[slackID]+1, after[slackID])
		require.Equal(t, before[jiraID]+1, after[jiraID])
	})

	t.Run("replayed delivery is refused", func(t *testing.T) {
		n := len(thread(t, o.ReadKey, f1))
		requireError(t, replay.send(t, ghID, ghSecret), 409, "already received")
		require.Len(t, thread(t, o.ReadKey, f1), n)
	})

	t.Run("bad signature is refused", func(t *testing.T) {
		n := len(thread(t, o.ReadKey, f1))
		ev := ghEvent(t, "issue_comment", comment(502, "/vulnscan resolved "+f1, 0, "OctoAnn"))
		requireError(t, ev.send(t, ghID, "not-the-secret-at-all"), 401, "X-Hub-Signature-256 does not match")
		unsigned := postRaw(t, "/integrations/"+ghID+"/events/github", map[string]string{"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": "d1"}, ev.body)
		requireError(t, unsigned, 401, "X-Hub-Signature-256 header is required")
		// The secret of one integration does not sign for another.
		requireError(t, ev.send(t, slackID, ghSecret), 404, "Integration not found")
		require.Len(t, thread(t, o.ReadKey, f1), n)
		require.Equal(t, "open", get(t, o.ReadKey, f1)["state"])
		// The same delivery, now correctly signed, is accepted: a refused
		// request leaves no receipt behind.
		r := ev.send(t, ghID, ghSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "resolved", get(t, o.ReadKey, f1)["state"])
	})

	t.Run("signed reaction changes the state", func(t *testing.T) {
		before := outboxCount(t, f1)
		ev := ghEvent(t, "reaction", map[string]any{"action": "created",
			"reaction": map[string]any{"content": "+1", "user": map[string]any{"login": "octoann"}},
			"comment":  map[string]any{"id": 9001}, "sender": map[string]any{"login": "octoann"}})
		r := ev.send(t, ghID, ghSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "changed", r.JSON()["status"])
		require.Equal(t, "true_positive", r.JSON()["state"])
		th := thread(t, o.ReadKey, f1)
		last := th[len(th)-1]
		require.Equal(t, "github", last["source"])
		require.Equal(t, "true_positive", last["reaction"])
		require.Equal(t, annID, last["user_id"])
		require.Equal(t, "ann", last["username"])
		after := outboxCount(t, f1)
		require.Equal(t, before[ghID], after[ghID], "no echo back to the git host")
		require.Equal(t, before[slackID]+1, after[slackID])
		require.Equal(t, before[jiraID]+1, after[jiraID])
	})

	t.Run("state command through the git host", func(t *testing.T) {
		before := outboxCount(t, f1)
		ev := ghEvent(t, "pull_request_review_comment", comment(503, "/vulnscan false_positive the input is a constant", 9001, "OctoAnn"))
		r := ev.send(t, ghID, ghSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "changed", r.JSON()["status"])
		f := get(t, o.ReadKey, f1)
		require.Equal(t, "false_positive", f["state"])
		th := f["triage_thread"].([]any)
		last := th[len(th)-1].(map[string]any)
		require.Equal(t, "false_positive", last["reaction"])
		require.Equal(t, "the input is a constant", last["comment"])
		require.Equal(t, "github", last["source"])

		// Audit trail: the change, by ann through the github integration.
		h := do(t, "GET", "/findings/"+f1+"/history", o.ReadKey, nil)
		require.Equal(t, 200, h.Status, "%s", h.Body)
		data := h.JSON()["data"].([]any)
		e := data[len(data)-1].(map[string]any)
		require.Equal(t, "state", e["field"])
		require.Equal(t, "true_positive", e["from"])
		require.Equal(t, "false_positive", e["to"])
		require.Equal(t, "the input is a constant", e["reason"])
		require.Equal(t, "github", e["source"])
		actor := e["actor"].(map[string]any)
		require.Equal(t, "integration", actor["type"])
		require.Equal(t, "github", actor["integration"])
		require.Equal(t, annID, actor["user_id"])

		// Propagated to the chat and the tracker, not back to the git host.
		after := outboxCount(t, f1)
		require.Equal(t, before[ghID], after[ghID])
		require.Equal(t, before[slackID]+1, after[slackID])
		require.Equal(t, before[jiraID]+1, after[jiraID])
		require.Eventually(t, func() bool {
			for _, c := range chat.got() {
				if strings.Contains(string(c.Body), "false_positive") && strings.Contains(string(c.Body), "the input is a constant") {
					return true
				}
			}
			return false
		}, 20*time.Second, 50*time.Millisecond)
		for _, c := range git.got() {
			require.NotContains(t, string(c.Body), "the input is a constant", "the change never goes back to where it came from")
		}
	})

	t.Run("state change by an unmapped user is refused", func(t *testing.T) {
		ev := ghEvent(t, "issue_comment", comment(504, "/vulnscan open "+f1, 0, "Stranger"))
		requireError(t, ev.send(t, ghID, ghSecret), 403, `"Stranger" is not mapped`)
		require.Equal(t, "false_positive", get(t, o.ReadKey, f1)["state"])
	})

	t.Run("unknown findings are refused", func(t *testing.T) {
		n := len(thread(t, o.ReadKey, f1))
		for _, id := range []string{uuid.NewString(), foreign} {
			ev := ghEvent(t, "issue_comment", comment(505, "/vulnscan resolved "+id+" gone", 0, "OctoAnn"))
			requireError(t, ev.send(t, ghID, ghSecret), 404, "Finding not found")
			requireError(t, slackForm("command", "/vulnscan", "text", "resolved "+id, "user_id", "U0ANN").send(t, slackID, slackSecret), 404, "Finding not found")
		}
		// A command that answers no comment of the integration and names no finding.
		ev := ghEvent(t, "pull_request_review_comment", comment(506, "/vulnscan resolved", 123456, "OctoAnn"))
		requireError(t, ev.send(t, ghID, ghSecret), 404, "Finding not found")
		require.Len(t, thread(t, o.ReadKey, f1), n)
		require.Equal(t, "low", get(t, other.ReadKey, foreign)["severity"])
		require.Equal(t, "open", get(t, other.ReadKey, foreign)["state"])
		// A plain comment about no finding is not ours to refuse.
		ev = ghEvent(t, "issue_comment", comment(507, "LGTM", 0, "OctoAnn"))
		r := ev.send(t, ghID, ghSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "ignored", r.JSON()["status"])
	})

	t.Run("unknown integrations are refused", func(t *testing.T) {
		ev := ghEvent(t, "issue_comment", comment(508, "hi", 9001, "OctoAnn"))
		requireError(t, ev.send(t, uuid.NewString(), ghSecret), 404, "Integration not found")
		requireError(t, ev.send(t, jiraID, ghSecret), 404, "Integration not found")
		requireError(t, postRaw(t, "/integrations/not-a-uuid/events/github", nil, ev.body), 400, "integration_id")
		requireError(t, postRaw(t, "/integrations/"+ghID+"/events/teams", nil, ev.body), 404, "provider")
	})

	t.Run("slack comment, command and action", func(t *testing.T) {
		r := slackForm("command", "/vulnscan", "text", "comment "+f2+" taking this one", "user_id", "U0ANN", "user_name", "ann.s").send(t, slackID, slackSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "recorded", r.JSON()["status"])
		th := thread(t, o.ReadKey, f2)
		last := th[len(th)-1]
		require.Equal(t, "slack", last["source"])
		require.Equal(t, "taking this one", last["comment"])
		require.Equal(t, annID, last["user_id"])

		before := outboxCount(t, f2)
		cmd := slackForm("command", "/vulnscan", "text", "accepted_risk "+f2+" internal admin only", "user_id", "U0ANN")
		r = cmd.send(t, slackID, slackSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "changed", r.JSON()["status"])
		require.Contains(t, r.JSON()["text"], "accepted_risk")
		f := get(t, o.ReadKey, f2)
		require.Equal(t, "accepted_risk", f["state"])
		th = thread(t, o.ReadKey, f2)
		last = th[len(th)-1]
		require.Equal(t, "slack", last["source"])
		require.Equal(t, "accepted_risk", last["reaction"])
		require.Equal(t, "internal admin only", last["comment"])
		after := outboxCount(t, f2)
		require.Equal(t, before[slackID], after[slackID], "no echo back to the chat")
		require.Equal(t, before[ghID]+1, after[ghID])
		require.Equal(t, before[jiraID]+1, after[jiraID])

		// The same request again is a replay.
		requireError(t, cmd.send(t, slackID, slackSecret), 409, "already received")

		// An interactive action (a button) names the state it sets.
		payload := fmt.Sprintf(`{"type":"block_actions","user":{"id":"U0ANN","username":"ann.s"},"actions":[{"action_id":"vulnscan_state","value":"true_positive:%s"}]}`, f2)
		r = slackForm("payload", payload).send(t, slackID, slackSecret)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.Equal(t, "true_positive", get(t, o.ReadKey, f2)["state"])
		th = thread(t, o.ReadKey, f2)
		require.Equal(t, "true_positive", th[len(th)-1]["reaction"])
		require.Equal(t, "slack", th[len(th)-1]["source"])
	})

	t.Run("stale or badly signed slack requests are refused", func(t *testing.T) {
		stale := slackForm("command", "/vulnscan", "text", "resolved "+f2, "user_id", "U0ANN")
		stale.ts = strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
		requireError(t, stale.send(t, slackID, slackSecret), 401, "outside the 5-minute window")
		requireError(t, slackForm("command", "/vulnscan", "text", "resolved "+f2, "user_id", "U0ANN").send(t, slackID, "wrong-secret-0000"), 401,
			"X-Slack-Signature does not match")
		require.Equal(t, "true_positive", get(t, o.ReadKey, f2)["state"])
	})
}
