// Package delivery sends the outbox's integration events: comments on the
// commit or pull request of a git hosting service (GitHub-style API),
// messages to a chat incoming webhook (Slack-style), and issues with
// follow-up comments in two issue trackers (Jira- and Linear-style APIs).
// Delivery is at least once: an event leaves the outbox only after the
// receiver answered 2xx, failed attempts are retried with exponential
// backoff and jitter, and an event that keeps failing is dead-lettered.
// When the integration has a secret, each request carries an HMAC-SHA256
// signature (X-Vulnscan-Signature: sha256=HEX over "TIMESTAMP.BODY", with
// the timestamp in X-Vulnscan-Timestamp) and X-Vulnscan-Delivery, a stable
// id receivers can use to drop repeats. The polling, leasing and retry
// schedule are package outbox's, shared with the outbound webhooks; its
// doc says why these events go through an outbox table rather than River.
package delivery

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vulnscan/vulnscan/pkg/redact"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/outbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// Worker delivers due outbox events until its context ends.
type Worker struct {
	outbox.Schedule
	Store  *store.Store
	Box    *secretbox.Box
	Client *http.Client
	Log    *slog.Logger
	// PublicURL is the API's address as users reach it (VULNSCAN_PUBLIC_URL);
	// pull request comments link to findings under it.
	PublicURL string
}

// Run polls for due events and delivers them, a batch at a time, through
// the shared outbox loop.
func (w *Worker) Run(ctx context.Context) error { return w.loop().Run(ctx) }

// Once claims one batch of due events and delivers it; more says the batch
// was full.
func (w *Worker) Once(ctx context.Context) (more bool, err error) { return w.loop().Once(ctx) }

func (w *Worker) loop() *outbox.Worker[store.Delivery] {
	return &outbox.Worker[store.Delivery]{Schedule: w.Schedule, Log: w.Log, Name: "delivery", Claim: w.Store.Claim, Deliver: w.deliverOne}
}

func (w *Worker) deliverOne(ctx context.Context, d store.Delivery) {
	ext, err := w.send(ctx, d)
	if err == nil {
		if err := w.Store.Delivered(ctx, d, ext); err != nil {
			w.Log.ErrorContext(ctx, "mark delivered", "event", d.ID, "error", err)
		}
		return
	}
	backoff, dead := w.Retry(d.Attempts)
	reason := w.redacted(d, err)
	w.Log.WarnContext(ctx, "delivery failed", "event", d.ID, "integration", d.Integration.ID, "kind", d.Integration.Kind,
		"attempt", d.Attempts, "dead", dead, "error", reason)
	if err := w.Store.Failed(ctx, d, reason, backoff, dead); err != nil {
		w.Log.ErrorContext(ctx, "mark failed", "event", d.ID, "error", err)
	}
}

// redacted is the text of a delivery error as it may be logged and stored:
// errors of the HTTP client quote the request URL, which for a webhook is
// the credential itself (only its host is kept) and for an API may carry
// userinfo or a query (dropped).
func (w *Worker) redacted(d store.Delivery, err error) string {
	hide := redact.URL
	if d.Integration.Kind == WebhookKind {
		hide = redact.Secret
	}
	target, _ := w.open(d.Integration.URLEnc, store.IntegrationURLAD(d.Integration.ID))
	return redact.Error(err, hide, target)
}

// WebhookKind is the integration kind whose URL is a secret.
const WebhookKind = "slack"

// request is one HTTP call to a receiver.
type request struct {
	url     string
	body    any
	headers map[string]string
	// parse extracts the created issue's id from the answer, if any.
	parse func([]byte) (string, error)
	// ref names what the answer says was created for the finding (a git
	// host comment), so that replies and reactions to it find the finding.
	ref func([]byte) string
}

// send delivers d and returns the external issue id it created, if any.
func (w *Worker) send(ctx context.Context, d store.Delivery) (string, error) {
	token, err := w.open(d.Integration.TokenEnc, store.IntegrationTokenAD(d.Integration.ID))
	if err != nil {
		return "", err
	}
	secret, err := w.open(d.Integration.SecretEnc, store.IntegrationSecretAD(d.Integration.ID))
	if err != nil {
		return "", err
	}
	// The URL to post to is the sealed one; Integration.URL is only its
	// display form (rows are sealed on start, so a clear one is legacy).
	if target, err := w.open(d.Integration.URLEnc, store.IntegrationURLAD(d.Integration.ID)); err != nil {
		return "", err
	} else if target != "" {
		d.Integration.URL = target
	}
	var reqs []request
	if d.Event == store.EventBulkUpdated {
		var bev store.BatchEvent
		if err := json.Unmarshal(d.Payload, &bev); err != nil {
			return "", fmt.Errorf("decode event: %w", err)
		}
		if reqs, err = buildBatch(d, bev, token); err != nil {
			return "", err
		}
		// A batch creates no issue of its own to remember.
		_, err = w.postAll(ctx, reqs, d, secret, "")
		return "", err
	}
	if d.Event == store.EventReviewSummary {
		var sum store.ReviewSummary
		if err := json.Unmarshal(d.Payload, &sum); err != nil {
			return "", fmt.Errorf("decode event: %w", err)
		}
		if reqs, err = w.buildSummary(d, sum, token); err != nil {
			return "", err
		}
		_, err = w.postAll(ctx, reqs, d, secret, "")
		return "", err
	}
	var ev store.Event
	if err := json.Unmarshal(d.Payload, &ev); err != nil {
		return "", fmt.Errorf("decode event: %w", err)
	}
	if d.Event == store.EventReviewComment {
		if reqs, err = w.buildReview(d, ev, token); err != nil {
			return "", err
		}
		// A review comment creates no issue to remember for the finding.
		_, err = w.postAll(ctx, reqs, d, secret, "")
		return d.ExternalID, err
	}
	reqs, err = build(d, ev, token)
	if err != nil {
		return "", err
	}
	return w.postAll(ctx, reqs, d, secret, d.ExternalID)
}

// postAll sends reqs in order. ext, the issue an earlier delivery created,
// fills the "{issue}" placeholders; a request that creates an issue
// replaces it. It returns the last issue id.
func (w *Worker) postAll(ctx context.Context, reqs []request, d store.Delivery, secret, ext string) (string, error) {
	for _, r := range reqs {
		if ext != "" {
			r.url = strings.ReplaceAll(r.url, "{issue}", url.PathEscape(ext))
			if m, ok := r.body.(map[string]any); ok {
				replaceIssue(m, ext)
			}
		}
		b, err := json.Marshal(r.body)
		if err != nil {
			return "", err
		}
		answer, err := w.post(ctx, r, b, d, secret)
		if err != nil {
			return "", err
		}
		if r.parse != nil {
			if ext, err = r.parse(answer); err != nil {
				return "", err
			}
		}
		if r.ref != nil && d.FindingID != "" {
			// The post is done: failing to remember it only costs replies
			// to it their finding, so it is logged, not retried.
			if ref := r.ref(answer); ref != "" {
				if err := w.Store.RecordRef(ctx, d.Integration.ID, d.FindingID, ref); err != nil {
					w.Log.ErrorContext(ctx, "record integration ref", "event", d.ID, "error", err)
				}
			}
		}
	}
	return ext, nil
}

func replaceIssue(m map[string]any, ext string) {
	for k, v := range m {
		switch x := v.(type) {
		case string:
			if x == "{issue}" {
				m[k] = ext
			}
		case map[string]any:
			replaceIssue(x, ext)
		}
	}
}

func (w *Worker) open(sealed []byte, ad secretbox.AD) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	b, _, err := w.Box.Open(sealed, ad)
	if err != nil {
		return "", fmt.Errorf("open integration credentials: %w", err)
	}
	return string(b), nil
}

func (w *Worker) post(ctx context.Context, r request, body []byte, d store.Delivery, secret string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "vulnscan-integrations/1")
	req.Header.Set("X-Vulnscan-Event", d.Event)
	req.Header.Set("X-Vulnscan-Delivery", strconv.FormatInt(d.ID, 10))
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	if secret != "" {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req.Header.Set("X-Vulnscan-Timestamp", ts)
		req.Header.Set("X-Vulnscan-Signature", "sha256="+Sign(secret, ts, body))
	}
	resp, err := w.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return answer, nil
}

// Sign returns the hex HMAC-SHA256 of "ts.body" under secret.
func Sign(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// text renders an event for humans.
func text(ev store.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[vulnscan] %s (%s, %s) in %s", ev.Finding.Title, ev.Finding.Severity, ev.Finding.State, codeSpan(ev.Finding.AffectedFile))
	for _, c := range ev.Changes {
		fmt.Fprintf(&b, "\n%s: %s → %s", c.Field, orNone(c.From), orNone(c.To))
	}
	if ev.Comment != "" {
		fmt.Fprintf(&b, "\n%s: %s", ev.Actor.Username, ev.Comment)
	} else {
		fmt.Fprintf(&b, "\nby %s", ev.Actor.Username)
	}
	fmt.Fprintf(&b, "\nfinding %s", ev.Finding.ID)
	return b.String()
}

// codeSpan renders a file path as inline code: a path holds what the
// repository's authors named it, and the git host, the trackers and the chat
// read message text as markdown, where "packages/@scope/x.ts" notifies the
// user or team "scope" and brackets and asterisks make links and emphasis.
// Inside a code span nothing is read. The fence is one backtick longer than
// the longest run of backticks in s (the markdown rule), with spaces inside
// when s starts or ends with one.
func codeSpan(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func orNone(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

var errNoTarget = errors.New("no commit or pull request to comment on")

// githubHeaders are the headers of every call to the git host's API.
func githubHeaders(token string) map[string]string {
	h := map[string]string{"Accept": "application/vnd.github+json"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return h
}

// githubCommentRef is "comment:ID" of the comment a git host answer
// created, or "" when the answer names none.
func githubCommentRef(b []byte) string {
	var r struct {
		ID int64 `json:"id"`
	}
	if json.Unmarshal(b, &r) != nil || r.ID <= 0 {
		return ""
	}
	return "comment:" + strconv.FormatInt(r.ID, 10)
}

// githubComment returns the call that comments msg on the scan's pull
// request or else, with commitBody, on its commit. ref, when set, reads the
// created comment's reference from the answer.
func githubComment(base string, sc store.EventScan, token, msg string, commitBody map[string]any, ref func([]byte) string) ([]request, error) {
	owner, repo, ok := ownerRepo(sc.RepoURL)
	if !ok {
		return nil, fmt.Errorf("repository %q has no owner/name path", sc.RepoURL)
	}
	h := githubHeaders(token)
	switch {
	case sc.PullRequest > 0:
		return []request{{url: fmt.Sprintf("%s/repos/%s/%s/issues/%d/comments", base, owner, repo, sc.PullRequest),
			body: map[string]any{"body": msg}, headers: h, ref: ref}}, nil
	case sc.CommitSHA != "":
		return []request{{url: fmt.Sprintf("%s/repos/%s/%s/commits/%s/comments", base, owner, repo, url.PathEscape(sc.CommitSHA)),
			body: commitBody, headers: h, ref: ref}}, nil
	}
	return nil, errNoTarget
}

// slackText escapes the three characters the chat's message format gives a
// meaning (its documented escaping): a file name or a comment in a message
// holds what its author wrote, and "<!channel>" would notify the whole
// channel, "<https://…|verify>" show a link under another name.
var slackText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// build returns the calls that deliver ev to d's integration.
func build(d store.Delivery, ev store.Event, token string) ([]request, error) {
	base := strings.TrimSuffix(d.Integration.URL, "/")
	msg := text(ev)
	switch d.Integration.Kind {
	case WebhookKind:
		return []request{{url: d.Integration.URL, body: map[string]any{"text": slackText(msg), "event": ev}}}, nil

	case "github":
		// A commit comment sits on the finding's line when it has one.
		body := map[string]any{"body": msg}
		if ev.Finding.AffectedFile != "" {
			body["path"] = ev.Finding.AffectedFile
			if ev.Finding.StartLine > 0 {
				body["line"] = ev.Finding.StartLine
			}
		}
		return githubComment(base, ev.Scan, token, msg, body, githubCommentRef)

	case "jira":
		h := map[string]string{"Accept": "application/json"}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		if d.ExternalID != "" {
			return []request{{url: base + "/rest/api/2/issue/{issue}/comment", body: map[string]any{"body": msg}, headers: h}}, nil
		}
		return []request{{url: base + "/rest/api/2/issue", headers: h, body: map[string]any{"fields": map[string]any{
			"project": map[string]any{"key": d.Integration.Project}, "summary": "[vulnscan] " + ev.Finding.Title,
			"description": msg, "issuetype": map[string]any{"name": "Bug"}, "labels": []string{"vulnscan", ev.Finding.Severity},
		}}, parse: func(b []byte) (string, error) {
			var r struct {
				Key string `json:"key"`
			}
			if err := json.Unmarshal(b, &r); err != nil || r.Key == "" {
				return "", errors.New("jira: answer without issue key")
			}
			return r.Key, nil
		}}}, nil

	case "linear":
		h := map[string]string{}
		if token != "" {
			h["Authorization"] = token
		}
		if d.ExternalID != "" {
			return []request{{url: base, headers: h, body: map[string]any{
				"query":     "mutation CommentCreate($input: CommentCreateInput!) { commentCreate(input: $input) { success } }",
				"variables": map[string]any{"input": map[string]any{"issueId": "{issue}", "body": msg}},
			}, parse: linearCheck("commentCreate", d.ExternalID)}}, nil
		}
		return []request{{url: base, headers: h, body: map[string]any{
			"query": "mutation IssueCreate($input: IssueCreateInput!) { issueCreate(input: $input) { success issue { id identifier } } }",
			"variables": map[string]any{"input": map[string]any{"teamId": d.Integration.Project,
				"title": "[vulnscan] " + ev.Finding.Title, "description": msg}},
		}, parse: linearCheck("issueCreate", "")}}, nil
	}
	return nil, fmt.Errorf("unknown integration kind %q", d.Integration.Kind)
}

// linearCheck reads a GraphQL answer: errors fail the delivery; an
// issueCreate answer yields the new issue's id.
func linearCheck(op, keep string) func([]byte) (string, error) {
	return func(b []byte) (string, error) {
		var r struct {
			Errors []struct {
				Message string `json:"message"`
			} `json:"errors"`
			Data map[string]struct {
				Success bool `json:"success"`
				Issue   struct {
					ID string `json:"id"`
				} `json:"issue"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return "", fmt.Errorf("linear: %w", err)
		}
		if len(r.Errors) > 0 {
			return "", fmt.Errorf("linear: %s", r.Errors[0].Message)
		}
		res := r.Data[op]
		if !res.Success {
			return "", fmt.Errorf("linear: %s failed", op)
		}
		if keep != "" {
			return keep, nil
		}
		if res.Issue.ID == "" {
			return "", errors.New("linear: answer without issue id")
		}
		return res.Issue.ID, nil
	}
}

// ownerRepo splits https://host/owner/repo(.git) into owner and repo.
func ownerRepo(raw string) (string, string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(u.Path, ".git"), "/"), "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[len(parts)-2], parts[len(parts)-1], true
}
