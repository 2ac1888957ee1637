package inbound

import (
	"errors"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const fid = "0b9f5a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"

func TestVerifyGitHub(t *testing.T) {
	t.Parallel()
	body := []byte(`{"action":"created"}`)
	good := "sha256=" + GitHubSign("s3cret-s3cret-s3", body)
	for _, tc := range []struct {
		name, header string
		body         []byte
		msg          string // "" when it verifies
	}{
		{"good", good, body, ""},
		{"upper-case hex", "sha256=" + upper(GitHubSign("s3cret-s3cret-s3", body)), body, ""},
		{"missing", "", body, "X-Hub-Signature-256 header is required"},
		{"other scheme", "sha1=" + GitHubSign("s3cret-s3cret-s3", body), body, "must be sha256="},
		{"other secret", "sha256=" + GitHubSign("another-secret!!", body), body, "does not match"},
		{"body changed", good, []byte(`{"action":"deleted"}`), "does not match"},
		{"not hex", "sha256=zz", body, "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireVerdict(t, VerifyGitHub("s3cret-s3cret-s3", tc.header, tc.body), tc.msg)
		})
	}
}

// requireVerdict checks a signature check's answer: none when msg is
// empty, else an unauthenticated refusal whose message contains msg.
func requireVerdict(t *testing.T, err error, msg string) {
	t.Helper()
	if msg == "" {
		require.NoError(t, err)
		return
	}
	var e *Error
	require.True(t, errors.As(err, &e))
	require.True(t, e.Unauthenticated)
	require.Contains(t, e.Msg, msg)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func TestVerifySlack(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte("command=%2Fvulnscan&text=open")
	ts := strconv.FormatInt(now.Unix(), 10)
	sign := func(ts string) string { return "v0=" + SlackSign("slack-signing-secret", ts, body) }
	old := strconv.FormatInt(now.Add(-Window-time.Second).Unix(), 10)
	future := strconv.FormatInt(now.Add(Window+time.Second).Unix(), 10)
	edge := strconv.FormatInt(now.Add(-Window).Unix(), 10)
	for _, tc := range []struct {
		name, sig, ts, msg string
	}{
		{"good", sign(ts), ts, ""},
		{"at the window's edge", sign(edge), edge, ""},
		{"stale", sign(old), old, "outside the 5-minute window"},
		{"from the future", sign(future), future, "outside the 5-minute window"},
		{"missing signature", "", ts, "X-Slack-Signature header is required"},
		{"missing timestamp", sign(ts), "", "X-Slack-Request-Timestamp header is required"},
		{"timestamp not a number", sign(ts), "soon", "Unix time"},
		{"signature for another timestamp", sign(edge), ts, "does not match"},
		{"wrong version", "v1=" + SlackSign("slack-signing-secret", ts, body), ts, "must be v0="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireVerdict(t, VerifySlack("slack-signing-secret", tc.sig, tc.ts, body, now), tc.msg)
		})
	}
}

func TestParseGitHub(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, event, body string
		want              Event
		msg               string // a refusal's message
	}{
		{"ping", "ping", `{}`, Event{Kind: Ping}, ""},
		{"unhandled event", "push", `{}`, Event{}, ""},
		{"missing event", "", `{}`, Event{}, "X-GitHub-Event header is required"},
		{"comment", "issue_comment", `{"action":"created","comment":{"id":5,"body":"looks real"},"sender":{"login":"OctoCat"}}`,
			Event{Kind: Comment, Text: "looks real", Author: "octocat", AuthorName: "OctoCat", Self: "comment:5"}, ""},
		{"the integration's own comment", "issue_comment", `{"action":"created","comment":{"id":5,"body":"[vulnscan] SQL injection (high, open)"},"sender":{"login":"bot"}}`,
			Event{}, ""},
		{"edited comment", "issue_comment", `{"action":"edited","comment":{"id":5,"body":"x"},"sender":{"login":"a"}}`, Event{}, ""},
		{"review reply", "pull_request_review_comment", `{"action":"created","comment":{"id":6,"body":"ok","in_reply_to_id":42},"sender":{"login":"a"}}`,
			Event{Kind: Comment, Text: "ok", Refs: []string{"comment:42"}, Author: "a", AuthorName: "a", Self: "comment:6"}, ""},
		{"command with reason", "pull_request_review_comment",
			`{"action":"created","comment":{"id":6,"body":"/vulnscan false_positive input is a constant","in_reply_to_id":42},"sender":{"login":"a"}}`,
			Event{Kind: State, State: "false_positive", Text: "input is a constant", Refs: []string{"comment:42"}, Author: "a", AuthorName: "a", Self: "comment:6"}, ""},
		{"command naming the finding", "commit_comment",
			`{"action":"created","comment":{"id":6,"body":"/vulnscan accepted_risk ` + upper(fid) + ` internal only"},"sender":{"login":"a"}}`,
			Event{Kind: State, State: "accepted_risk", FindingID: fid, Text: "internal only", Author: "a", AuthorName: "a", Self: "comment:6"}, ""},
		{"command after a quote", "issue_comment",
			`{"action":"created","comment":{"id":6,"body":"> [vulnscan] SQL injection\n> finding ` + fid + `\n\n/vulnscan resolved fixed in #12"},"sender":{"login":"a"}}`,
			Event{Kind: State, State: "resolved", FindingID: fid, Text: "fixed in #12", Author: "a", AuthorName: "a", Self: "comment:6"}, ""},
		{"command in a later line is a comment", "issue_comment",
			`{"action":"created","comment":{"id":6,"body":"see\n/vulnscan resolved"},"sender":{"login":"a"}}`,
			Event{Kind: Comment, Text: "see\n/vulnscan resolved", Author: "a", AuthorName: "a", Self: "comment:6"}, ""},
		{"unknown state", "issue_comment", `{"action":"created","comment":{"id":6,"body":"/vulnscan wontfix"},"sender":{"login":"a"}}`,
			Event{}, `(got "wontfix")`},
		{"bare command", "issue_comment", `{"action":"created","comment":{"id":6,"body":"/vulnscan"},"sender":{"login":"a"}}`,
			Event{}, "command must be /vulnscan STATE"},
		{"thumbs down", "reaction", `{"action":"created","reaction":{"content":"-1","user":{"login":"Bob"}},"comment":{"id":77}}`,
			Event{Kind: State, State: "false_positive", Reaction: true, Refs: []string{"comment:77"}, Author: "bob", AuthorName: "Bob"}, ""},
		{"thumbs up", "reaction", `{"action":"created","reaction":{"content":"+1","user":{"login":"bob"}},"comment":{"id":77}}`,
			Event{Kind: State, State: "true_positive", Reaction: true, Refs: []string{"comment:77"}, Author: "bob", AuthorName: "bob"}, ""},
		{"other reaction", "reaction", `{"action":"created","reaction":{"content":"heart","user":{"login":"bob"}},"comment":{"id":77}}`, Event{}, ""},
		{"not JSON", "issue_comment", `{`, Event{}, "body must be a JSON issue_comment event"},
		{"no comment", "issue_comment", `{"action":"created","sender":{"login":"a"}}`, Event{}, "comment is required"},
		{"no sender", "issue_comment", `{"action":"created","comment":{"id":6,"body":"hi"}}`, Event{}, "sender.login is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := ParseGitHub(tc.event, []byte(tc.body))
			if tc.msg != "" {
				var e *Error
				require.True(t, errors.As(err, &e), "err %v", err)
				require.False(t, e.Unauthenticated)
				require.Contains(t, e.Msg, tc.msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, ev)
		})
	}
}

func TestParseSlack(t *testing.T) {
	t.Parallel()
	form := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	const ct = "application/x-www-form-urlencoded"
	for _, tc := range []struct {
		name, ct, body string
		want           Event
		msg            string
	}{
		{"state command", ct, form("command", "/vulnscan", "text", "false_positive "+fid+" test fixture", "user_id", "U1", "user_name", "ann"),
			Event{Kind: State, State: "false_positive", FindingID: fid, Text: "test fixture", Author: "U1", AuthorName: "ann"}, ""},
		{"comment command", ct, form("command", "/vulnscan", "text", "comment "+fid+" on it", "user_id", "U1"),
			Event{Kind: Comment, FindingID: fid, Text: "on it", Author: "U1", AuthorName: "U1"}, ""},
		{"state without finding", ct, form("command", "/vulnscan", "text", "resolved", "user_id", "U1"), Event{}, "finding_id is required"},
		{"comment without text", ct, form("command", "/vulnscan", "text", "comment "+fid, "user_id", "U1"), Event{}, "comment must not be empty"},
		{"comment with a bad id", ct, form("command", "/vulnscan", "text", "comment nope hi", "user_id", "U1"), Event{}, "finding_id must be a UUID"},
		{"other command", ct, form("command", "/deploy", "text", "now", "user_id", "U1"), Event{}, "command must be /vulnscan"},
		{"no user", ct, form("command", "/vulnscan", "text", "open "+fid), Event{}, "user_id is required"},
		{"JSON body", "application/json", `{}`, Event{}, "Content-Type must be application/x-www-form-urlencoded"},
		{"action", ct, form("payload", `{"type":"block_actions","user":{"id":"U2","username":"bo"},"actions":[{"action_id":"vulnscan_state","value":"accepted_risk:`+fid+`"}]}`),
			Event{Kind: State, State: "accepted_risk", FindingID: fid, Author: "U2", AuthorName: "bo", Reaction: true}, ""},
		{"action with a bad value", ct, form("payload", `{"type":"block_actions","user":{"id":"U2"},"actions":[{"value":"maybe:`+fid+`"}]}`),
			Event{}, "payload.actions[0].value must be STATE:FINDING_ID"},
		{"other interaction", ct, form("payload", `{"type":"view_submission","user":{"id":"U2"}}`), Event{}, ""},
		{"payload not JSON", ct, form("payload", `{`), Event{}, "payload must be JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := ParseSlack(tc.ct, []byte(tc.body))
			if tc.msg != "" {
				var e *Error
				require.True(t, errors.As(err, &e), "err %v", err)
				require.Contains(t, e.Msg, tc.msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, ev)
		})
	}
}

// FuzzParse feeds untrusted bodies to both parsers: they answer an event or
// an *Error, never panic.
func FuzzParse(f *testing.F) {
	f.Add("issue_comment", []byte(`{"action":"created","comment":{"id":1,"body":"/vulnscan open x"},"sender":{"login":"a"}}`))
	f.Add("reaction", []byte(`{"action":"created","reaction":{"content":"-1"},"comment":{"id":1},"sender":{"login":"a"}}`))
	f.Add("slack", []byte("command=%2Fvulnscan&text=comment+"+fid+"+hi&user_id=U1"))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		var e *Error
		if _, err := ParseGitHub(event, body); err != nil && !errors.As(err, &e) {
			t.Fatalf("unexpected error type %T", err)
		}
		if _, err := ParseSlack("application/x-www-form-urlencoded", body); err != nil && !errors.As(err, &e) {
			t.Fatalf("unexpected error type %T", err)
		}
	})
}
