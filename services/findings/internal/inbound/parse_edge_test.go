package inbound

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireInvalid checks err is a bad-request refusal whose message is msg.
func requireInvalid(t *testing.T, err error, msg string) {
	t.Helper()
	var e *Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.False(t, e.Unauthenticated)
	require.Contains(t, e.Error(), msg)
}

// requireParsed checks a parse: refused with msg and no event, or else
// exactly want.
func requireParsed(t *testing.T, got Event, err error, want Event, msg string) {
	t.Helper()
	if msg != "" {
		requireInvalid(t, err, msg)
		require.Equal(t, Event{}, got)
		return
	}
	require.NoError(t, err)
	require.Equal(t, want, got)
}

var upperFid = strings.ToUpper(fid)

// TestParseGitHubEdges covers malformed payloads, reactions, authors and
// comment bodies the command reader must not misread.
func TestParseGitHubEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, event, body string
		want              Event
		msg               string
	}{
		{"body not JSON", "commit_comment", `{"action":`, Event{}, "body must be a JSON commit_comment event"},
		{"created without comment", "issue_comment", `{"action":"created","sender":{"login":"a"}}`, Event{}, "comment is required in a issue_comment event"},
		{"reaction without reaction", "reaction", `{"action":"created","comment":{"id":5},"sender":{"login":"a"}}`, Event{}, "reaction is required"},
		{"reaction naming no state", "reaction", `{"action":"created","comment":{"id":5},"reaction":{"content":"heart"},"sender":{"login":"a"}}`, Event{}, ""},
		{"thumbs down by the reacting user", "reaction", `{"action":"created","comment":{"id":5},"reaction":{"content":"-1","user":{"login":"Bob"}},"sender":{"login":"app"}}`,
			Event{Kind: State, State: "false_positive", Reaction: true, Refs: []string{"comment:5"}, Author: "bob", AuthorName: "Bob"}, ""},
		{"reaction without any login", "reaction", `{"action":"created","comment":{"id":5},"reaction":{"content":"+1"}}`, Event{}, "sender.login is required"},
		{"comment author when no sender", "commit_comment", `{"action":"created","comment":{"id":8,"body":"hm","user":{"login":"Eve"}}}`,
			Event{Kind: Comment, Text: "hm", Self: "comment:8", Author: "eve", AuthorName: "Eve"}, ""},
		{"marker after leading space", "issue_comment", `{"action":"created","comment":{"id":5,"body":"  [vulnscan] x"},"sender":{"login":"bot"}}`, Event{}, ""},
		{"blank comment", "issue_comment", `{"action":"created","comment":{"id":9,"body":" \n\t"},"sender":{"login":"a"}}`,
			Event{Self: "comment:9", Author: "a", AuthorName: "a"}, ""},
		{"command after quoted lines with reason over lines", "issue_comment",
			`{"action":"created","comment":{"id":10,"body":"> quoted\n\n  /vulnscan resolved fixed in\n  v2.1"},"sender":{"login":"a"}}`,
			Event{Kind: State, State: "resolved", Text: "fixed in v2.1", Self: "comment:10", Author: "a", AuthorName: "a"}, ""},
		{"word starting with the command is a comment", "issue_comment", `{"action":"created","comment":{"id":11,"body":"/vulnscanner resolved"},"sender":{"login":"a"}}`,
			Event{Kind: Comment, Text: "/vulnscanner resolved", Self: "comment:11", Author: "a", AuthorName: "a"}, ""},
		{"command on a later line is a comment", "issue_comment", `{"action":"created","comment":{"id":12,"body":"hello\n/vulnscan resolved"},"sender":{"login":"a"}}`,
			Event{Kind: Comment, Text: "hello\n/vulnscan resolved", Self: "comment:12", Author: "a", AuthorName: "a"}, ""},
		{"command with a tab", "issue_comment", `{"action":"created","comment":{"id":13,"body":"/vulnscan\taccepted_risk ` + upperFid + ` low impact"},"sender":{"login":"a"}}`,
			Event{Kind: State, State: "accepted_risk", FindingID: fid, Text: "low impact", Self: "comment:13", Author: "a", AuthorName: "a"}, ""},
		{"bare command", "issue_comment", `{"action":"created","comment":{"id":14,"body":"/vulnscan"},"sender":{"login":"a"}}`, Event{}, "command must be /vulnscan STATE"},
		{"unknown state", "issue_comment", `{"action":"created","comment":{"id":15,"body":"/vulnscan close it"},"sender":{"login":"a"}}`, Event{}, `(got "close")`},
		{"comment verb is chat only", "issue_comment", `{"action":"created","comment":{"id":16,"body":"/vulnscan comment ` + fid + ` x"},"sender":{"login":"a"}}`, Event{}, `(got "comment")`},
		{"quoted finding in a reply", "pull_request_review_comment",
			`{"action":"created","comment":{"id":17,"body":"> finding ` + upperFid + `\n\nagreed","in_reply_to_id":3},"sender":{"login":"a"}}`,
			Event{Kind: Comment, Text: "> finding " + upperFid + "\n\nagreed", FindingID: fid, Refs: []string{"comment:3"}, Self: "comment:17", Author: "a", AuthorName: "a"}, ""},
		{"NUL and bytes that are not UTF-8 are made text", "issue_comment",
			`{"action":"created","comment":{"id":19,"body":"/vulnscan resolved fixed\u0000 café"},"sender":{"login":"Oc\u0000to"}}`,
			Event{Kind: State, State: "resolved", Text: "fixed\uFFFD café", Self: "comment:19", Author: "oc\uFFFDto", AuthorName: "Oc\uFFFDto"}, ""},
		{"a short id is part of the reason", "issue_comment", `{"action":"created","comment":{"id":18,"body":"/vulnscan open abc123 reopened"},"sender":{"login":"a"}}`,
			Event{Kind: State, State: "open", Text: "abc123 reopened", Self: "comment:18", Author: "a", AuthorName: "a"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseGitHub(tc.event, []byte(tc.body))
			requireParsed(t, got, err, tc.want, tc.msg)
		})
	}
}

const formType = "application/x-www-form-urlencoded"

// formBody form-encodes key, value pairs in their order.
func formBody(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv[i]) + "=" + url.QueryEscape(kv[i+1]))
	}
	return b.String()
}

// TestParseSlackEdges covers content types, actions and commands that are
// refused or ignored.
func TestParseSlackEdges(t *testing.T) {
	t.Parallel()
	form, ct := formBody, formType
	for _, tc := range []struct {
		name, contentType, body string
		want                    Event
		msg                     string
	}{
		{"json body", "application/json", `{}`, Event{}, "Content-Type must be application/x-www-form-urlencoded"},
		{"no content type", "", form("command", "/vulnscan"), Event{}, "Content-Type must be"},
		{"bad form encoding", ct, "a=%zz", Event{}, "body must be form-encoded"},
		{"charset parameter accepted", ct + "; charset=utf-8", form("command", "/vulnscan", "text", "resolved "+fid, "user_id", "U1", "user_name", "ana"),
			Event{Kind: State, State: "resolved", FindingID: fid, Author: "U1", AuthorName: "ana"}, ""},
		{"other command", ct, form("command", "/deploy", "text", "resolved "+fid, "user_id", "U1"), Event{}, "command must be /vulnscan"},
		{"state without finding", ct, form("command", "/vulnscan", "text", "resolved because", "user_id", "U1"), Event{}, "finding_id is required: /vulnscan resolved FINDING_ID"},
		{"no user", ct, form("command", "/vulnscan", "text", "open "+fid), Event{}, "user_id is required"},
		{"no user name", ct, form("command", "/vulnscan", "text", "true_positive "+upperFid+"  confirmed   twice", "user_id", "U2"),
			Event{Kind: State, State: "true_positive", FindingID: fid, Text: "confirmed   twice", Author: "U2", AuthorName: "U2"}, ""},
		{"comment with a bad id", ct, form("command", "/vulnscan", "text", "comment 42 hello", "user_id", "U1"), Event{}, "finding_id must be a UUID"},
		{"empty comment", ct, form("command", "/vulnscan", "text", "comment "+fid+"   ", "user_id", "U1"), Event{}, "comment must not be empty"},
		{"empty text names the comment form", ct, form("command", "/vulnscan", "text", "", "user_id", "U1"), Event{}, "or /vulnscan comment FINDING_ID TEXT"},
		{"payload not JSON", ct, form("payload", "{"), Event{}, "payload must be JSON"},
		{"other interaction type", ct, form("payload", `{"type":"view_submission","user":{"id":"U1"},"actions":[{"value":"open:`+fid+`"}]}`), Event{}, ""},
		{"action list empty", ct, form("payload", `{"type":"block_actions","user":{"id":"U1"},"actions":[]}`), Event{}, ""},
		{"action without user", ct, form("payload", `{"type":"block_actions","actions":[{"value":"open:`+fid+`"}]}`), Event{}, "payload.user.id is required"},
		{"action value without colon", ct, form("payload", `{"type":"block_actions","user":{"id":"U1"},"actions":[{"value":"open"}]}`), Event{}, "must be STATE:FINDING_ID"},
		{"action unknown state", ct, form("payload", `{"type":"block_actions","user":{"id":"U1"},"actions":[{"value":"closed:`+fid+`"}]}`), Event{}, "must be STATE:FINDING_ID"},
		{"action bad id", ct, form("payload", `{"type":"block_actions","user":{"id":"U1"},"actions":[{"value":"open:{`+fid+`}"}]}`), Event{}, "finding_id must be a UUID"},
		{"NUL and bytes that are not UTF-8 are made text", ct, "command=%2Fvulnscan&text=resolved+" + fid + "+caf%E9%00&user_id=U%FF1&user_name=an%00a",
			Event{Kind: State, State: "resolved", FindingID: fid, Text: "café\uFFFD", Author: "Uÿ1", AuthorName: "an\uFFFDa"}, ""},
		{"action without user name", ct, form("payload", `{"type":"block_actions","user":{"id":"U7"},"actions":[{"value":"accepted_risk:`+upperFid+`"},{"value":"open:x"}]}`),
			Event{Kind: State, State: "accepted_risk", FindingID: fid, Author: "U7", AuthorName: "U7", Reaction: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSlack(tc.contentType, []byte(tc.body))
			requireParsed(t, got, err, tc.want, tc.msg)
		})
	}
}
