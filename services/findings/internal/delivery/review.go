package delivery

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// A pull request scan talks back to the pull request through the git
// hosting integration (GitHub-style API):
//   - each new finding becomes a review comment on its line,
//     POST /repos/{owner}/{repo}/pulls/{n}/comments {body, commit_id, path,
//     line, side: RIGHT}; without a pull request number, a comment on the
//     head commit's line, POST /repos/{owner}/{repo}/commits/{sha}/comments
//     {body, path, line};
//   - one summary per scan, counts by severity and a link to each finding,
//     POST /repos/{owner}/{repo}/issues/{n}/comments {body} (or a comment on
//     the head commit without a pull request).
// Both go through the outbox like every other event: retried with backoff,
// dead-lettered after the last attempt, and carrying X-Vulnscan-Delivery so
// the receiver can drop repeats.

// findingLink is where a finding is read through the API.
func (w *Worker) findingLink(id string) string {
	return strings.TrimSuffix(w.PublicURL, "/") + "/v1/findings/" + url.PathEscape(id)
}

// reviewText renders one new finding for a review comment.
func (w *Worker) reviewText(f store.EventFinding) string {
	return fmt.Sprintf("**[vulnscan] %s** (%s, %s)\n\nIntroduced by this change. Details, trace and triage: %s",
		f.Title, f.Severity, f.Category, w.findingLink(f.ID))
}

// summaryText renders a PR scan's summary: counts by severity, then each
// finding with its location and link.
func (w *Worker) summaryText(s store.ReviewSummary) string {
	var b strings.Builder
	if len(s.Findings) == 0 {
		b.WriteString("**[vulnscan] No new findings in this change.**")
		return b.String()
	}
	fmt.Fprintf(&b, "**[vulnscan] %d new finding(s) in this change**\n\n", len(s.Findings))
	var counts []string
	for _, sev := range vocab.Severities.Strings() {
		counts = append(counts, fmt.Sprintf("%s: %d", sev, s.Counts[sev]))
	}
	b.WriteString(strings.Join(counts, " · "))
	b.WriteString("\n")
	for i, f := range s.Findings {
		if i == batchListMax {
			fmt.Fprintf(&b, "\n… and %d more", len(s.Findings)-batchListMax)
			break
		}
		fmt.Fprintf(&b, "\n- %s (%s) in %s: %s", f.Title, f.Severity, codeSpan(fmt.Sprintf("%s:%d", f.AffectedFile, f.StartLine)), w.findingLink(f.ID))
	}
	fmt.Fprintf(&b, "\n\nscan %s", s.Scan.ID)
	return b.String()
}

// buildReview returns the call that posts a new finding of a PR scan on its
// line. The comment's id is remembered, so replies and reactions to it reach
// the finding's triage thread.
func (w *Worker) buildReview(d store.Delivery, ev store.Event, token string) ([]request, error) {
	if d.Integration.Kind != store.GitHostingKind {
		return nil, fmt.Errorf("review comments go to git hosting integrations only, not %q", d.Integration.Kind)
	}
	base := strings.TrimSuffix(d.Integration.URL, "/")
	owner, repo, ok := ownerRepo(ev.Scan.RepoURL)
	if !ok {
		return nil, fmt.Errorf("repository %q has no owner/name path", ev.Scan.RepoURL)
	}
	body := map[string]any{"body": w.reviewText(ev.Finding), "path": ev.Finding.AffectedFile}
	if ev.Finding.StartLine > 0 {
		body["line"] = ev.Finding.StartLine
	}
	h := githubHeaders(token)
	switch {
	case ev.Scan.PullRequest > 0:
		body["commit_id"], body["side"] = ev.Scan.CommitSHA, "RIGHT"
		return []request{{url: fmt.Sprintf("%s/repos/%s/%s/pulls/%d/comments", base, owner, repo, ev.Scan.PullRequest), body: body, headers: h, ref: githubCommentRef}}, nil
	case ev.Scan.CommitSHA != "":
		return []request{{url: fmt.Sprintf("%s/repos/%s/%s/commits/%s/comments", base, owner, repo, url.PathEscape(ev.Scan.CommitSHA)), body: body, headers: h, ref: githubCommentRef}}, nil
	}
	return nil, errNoTarget
}

// buildSummary returns the call that posts a PR scan's summary.
func (w *Worker) buildSummary(d store.Delivery, s store.ReviewSummary, token string) ([]request, error) {
	if d.Integration.Kind != store.GitHostingKind {
		return nil, fmt.Errorf("review summaries go to git hosting integrations only, not %q", d.Integration.Kind)
	}
	base := strings.TrimSuffix(d.Integration.URL, "/")
	owner, repo, ok := ownerRepo(s.Scan.RepoURL)
	if !ok {
		return nil, fmt.Errorf("repository %q has no owner/name path", s.Scan.RepoURL)
	}
	body := map[string]any{"body": w.summaryText(s)}
	h := githubHeaders(token)
	switch {
	case s.Scan.PullRequest > 0:
		return []request{{url: fmt.Sprintf("%s/repos/%s/%s/issues/%d/comments", base, owner, repo, s.Scan.PullRequest), body: body, headers: h}}, nil
	case s.Scan.CommitSHA != "":
		return []request{{url: fmt.Sprintf("%s/repos/%s/%s/commits/%s/comments", base, owner, repo, url.PathEscape(s.Scan.CommitSHA)), body: body, headers: h}}, nil
	}
	return nil, errNoTarget
}
