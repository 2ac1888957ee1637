package delivery

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// got is one request the loopback receiver got.
type got struct {
	path   string
	header http.Header
	body   map[string]any
	raw    []byte
}

// sendCase is one delivery to one kind of integration.
type sendCase struct {
	name     string
	kind     string
	project  string
	external string
	scan     store.EventScan
	token    string
	status   int
	answer   string
	wantErr  string
	wantExt  string
	wantPath string
	wantBody map[string]any
	// wantHeaders must match; an empty value must be absent.
	wantHeaders map[string]string
}

const sendSecret = "integration-signing-secret"

var sendEvent = store.Event{Event: "finding.updated",
	Finding: store.EventFinding{ID: "f1", Title: "XSS", Category: "xss", Severity: "high", State: "resolved", AffectedFile: "web/a.js", StartLine: 12},
	Changes: []store.Change{{Field: "state", From: strptr("open"), To: strptr("resolved")}},
	Actor:   store.EventActor{UserID: "u1", Username: "ana", Source: "api"}}

const sendText = "[vulnscan] XSS (high, resolved) in `web/a.js`\nstate: open → resolved\nby ana\nfinding f1"

func strptr(s string) *string { return &s }

// TestSendRequestShapes delivers one finding event to each integration kind
// on a loopback receiver and checks the path, headers, signature and body
// of the request, and the issue id kept from the answer.
func TestSendRequestShapes(t *testing.T) {
	t.Parallel()
	pr := store.EventScan{RepoURL: "https://git.example.com/acme/app.git", CommitSHA: "c0ffee", PullRequest: 7}
	commit := store.EventScan{RepoURL: "https://git.example.com/acme/app", CommitSHA: "c0ffee"}
	for _, c := range []sendCase{
		{name: "chat webhook", kind: WebhookKind, token: "unused", status: 200, wantPath: "/hook/T1/B2",
			wantBody:    map[string]any{"text": sendText},
			wantHeaders: map[string]string{"Authorization": ""}},
		{name: "git host pull request comment", kind: "github", scan: pr, token: "ghtok", status: 201, answer: `{"id": 99}`,
			wantPath: "/api/repos/acme/app/issues/7/comments", wantBody: map[string]any{"body": sendText},
			wantHeaders: map[string]string{"Authorization": "Bearer ghtok", "Accept": "application/vnd.github+json"}},
		{name: "git host commit comment on the line", kind: "github", scan: commit, status: 201,
			wantPath: "/api/repos/acme/app/commits/c0ffee/comments", wantBody: map[string]any{"body": sendText, "path": "web/a.js", "line": float64(12)},
			wantHeaders: map[string]string{"Authorization": "", "Accept": "application/vnd.github+json"}},
		{name: "git host without commit or pull request", kind: "github", scan: store.EventScan{RepoURL: "https://git.example.com/acme/app"},
			wantErr: "no commit or pull request to comment on"},
		{name: "git host repository without owner", kind: "github", scan: store.EventScan{RepoURL: "https://git.example.com/app", CommitSHA: "c"},
			wantErr: "has no owner/name path"},
		{name: "tracker issue created", kind: "jira", project: "SEC", token: "jtok", status: 201, answer: `{"id":"1","key":"SEC-12"}`, wantExt: "SEC-12",
			wantPath: "/api/rest/api/2/issue", wantBody: map[string]any{"fields": map[string]any{"project": map[string]any{"key": "SEC"},
				"summary": "[vulnscan] XSS", "description": sendText, "issuetype": map[string]any{"name": "Bug"}, "labels": []any{"vulnscan", "high"}}},
			wantHeaders: map[string]string{"Authorization": "Bearer jtok", "Accept": "application/json"}},
		{name: "tracker follow-up comment", kind: "jira", external: "SEC-9", status: 201, answer: `{}`, wantExt: "SEC-9",
			wantPath: "/api/rest/api/2/issue/SEC-9/comment", wantBody: map[string]any{"body": sendText},
			wantHeaders: map[string]string{"Authorization": ""}},
		{name: "tracker answer without key", kind: "jira", project: "SEC", status: 201, answer: `{"id":"1"}`,
			wantPath: "/api/rest/api/2/issue", wantErr: "jira: answer without issue key"},
		{name: "graphql issue created", kind: "linear", project: "team-1", token: "lin_key", status: 200,
			answer: `{"data":{"issueCreate":{"success":true,"issue":{"id":"iss-1","identifier":"ENG-1"}}}}`, wantExt: "iss-1",
			wantPath: "/api", wantBody: map[string]any{
				"query":     "mutation IssueCreate($input: IssueCreateInput!) { issueCreate(input: $input) { success issue { id identifier } } }",
				"variables": map[string]any{"input": map[string]any{"teamId": "team-1", "title": "[vulnscan] XSS", "description": sendText}}},
			wantHeaders: map[string]string{"Authorization": "lin_key"}},
		{name: "graphql follow-up comment names the issue", kind: "linear", external: "iss-1", status: 200,
			answer: `{"data":{"commentCreate":{"success":true}}}`, wantExt: "iss-1",
			wantPath: "/api", wantBody: map[string]any{
				"query":     "mutation CommentCreate($input: CommentCreateInput!) { commentCreate(input: $input) { success } }",
				"variables": map[string]any{"input": map[string]any{"issueId": "iss-1", "body": sendText}}}},
		{name: "graphql errors fail the delivery", kind: "linear", project: "team-1", status: 200,
			answer: `{"errors":[{"message":"team not found"}]}`, wantPath: "/api", wantErr: "linear: team not found"},
		{name: "graphql unsuccessful", kind: "linear", external: "iss-1", status: 200,
			answer: `{"data":{"commentCreate":{"success":false}}}`, wantPath: "/api", wantErr: "linear: commentCreate failed"},
		{name: "receiver error", kind: "jira", project: "SEC", status: 503, wantPath: "/api/rest/api/2/issue", wantErr: "receiver answered 503"},
		{name: "unknown kind", kind: "pager", wantErr: `unknown integration kind "pager"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runSendCase(t, c)
		})
	}
}

func runSendCase(t *testing.T, c sendCase) {
	var mu sync.Mutex
	var reqs []got
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		reqs = append(reqs, got{path: r.URL.Path, header: r.Header.Clone(), body: body, raw: raw})
		mu.Unlock()
		w.WriteHeader(c.status)
		_, _ = io.WriteString(w, c.answer)
	}))
	t.Cleanup(recv.Close)

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	require.NoError(t, err)
	target := recv.URL + "/api/"
	if c.kind == WebhookKind {
		target = recv.URL + "/hook/T1/B2"
	}
	integ := store.Integration{ID: "11111111-2222-3333-4444-555555555555", Kind: c.kind, Project: c.project, URL: "https://shown.example/REDACTED"}
	integ.URLEnc, err = box.Seal([]byte(target), store.IntegrationURLAD(integ.ID))
	require.NoError(t, err)
	integ.SecretEnc, err = box.Seal([]byte(sendSecret), store.IntegrationSecretAD(integ.ID))
	require.NoError(t, err)
	if c.token != "" {
		integ.TokenEnc, err = box.Seal([]byte(c.token), store.IntegrationTokenAD(integ.ID))
		require.NoError(t, err)
	}
	ev := sendEvent
	ev.Scan = c.scan
	payload, err := json.Marshal(ev)
	require.NoError(t, err)
	w := &Worker{Box: box, Client: recv.Client(), Log: slog.New(slog.DiscardHandler)}
	ext, err := w.send(context.Background(), store.Delivery{ID: 4242, Attempts: 1, Event: ev.Event, Payload: payload, Integration: integ, ExternalID: c.external})

	mu.Lock()
	defer mu.Unlock()
	if c.wantPath == "" {
		require.Empty(t, reqs, "nothing is sent")
	} else {
		require.Len(t, reqs, 1)
		r := reqs[0]
		require.Equal(t, c.wantPath, r.path)
		require.Equal(t, "application/json", r.header.Get("Content-Type"))
		require.Equal(t, "vulnscan-integrations/1", r.header.Get("User-Agent"))
		require.Equal(t, "finding.updated", r.header.Get("X-Vulnscan-Event"))
		require.Equal(t, "4242", r.header.Get("X-Vulnscan-Delivery"))
		ts := r.header.Get("X-Vulnscan-Timestamp")
		require.NotEmpty(t, ts)
		m := hmac.New(sha256.New, []byte(sendSecret))
		m.Write([]byte(ts + "."))
		m.Write(r.raw)
		require.Equal(t, "sha256="+hex.EncodeToString(m.Sum(nil)), r.header.Get("X-Vulnscan-Signature"))
		for k, v := range c.wantHeaders {
			require.Equal(t, v, r.header.Get(k), k)
		}
		if c.wantBody != nil {
			body := r.body
			if c.kind == WebhookKind {
				// The chat message carries the whole event beside its text.
				var evOut store.Event
				b, err := json.Marshal(body["event"])
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &evOut))
				require.Equal(t, ev, evOut)
				delete(body, "event")
			}
			require.Equal(t, c.wantBody, body)
		}
	}
	if c.wantErr != "" {
		require.ErrorContains(t, err, c.wantErr)
		return
	}
	require.NoError(t, err)
	require.Equal(t, c.wantExt, ext)
}

// TestSendUnsignedWithoutSecret: an integration with no secret sends no
// signature headers.
func TestSendUnsignedWithoutSecret(t *testing.T) {
	t.Parallel()
	var hdr http.Header
	var mu sync.Mutex
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hdr = r.Header.Clone()
		mu.Unlock()
	}))
	t.Cleanup(recv.Close)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	require.NoError(t, err)
	integ := store.Integration{ID: "11111111-2222-3333-4444-666666666666", Kind: WebhookKind}
	integ.URLEnc, err = box.Seal([]byte(recv.URL), store.IntegrationURLAD(integ.ID))
	require.NoError(t, err)
	payload, err := json.Marshal(sendEvent)
	require.NoError(t, err)
	w := &Worker{Box: box, Client: recv.Client(), Log: slog.New(slog.DiscardHandler)}
	_, err = w.send(context.Background(), store.Delivery{ID: 1, Event: sendEvent.Event, Payload: payload, Integration: integ})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.NotNil(t, hdr)
	require.Empty(t, hdr.Get("X-Vulnscan-Signature"))
	require.Empty(t, hdr.Get("X-Vulnscan-Timestamp"))
	require.Equal(t, "1", hdr.Get("X-Vulnscan-Delivery"))

	// A URL sealed for another integration does not open.
	integ.ID = "11111111-2222-3333-4444-777777777777"
	_, err = w.send(context.Background(), store.Delivery{ID: 2, Event: sendEvent.Event, Payload: payload, Integration: integ})
	require.ErrorContains(t, err, "open integration credentials")
}
