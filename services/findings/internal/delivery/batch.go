package delivery

import (
	"fmt"
	"strings"

	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// batchListMax is how many findings a batch message lists by name; the
// rest are counted.
const batchListMax = 50

// batchText renders a bulk change for humans: who changed how many
// findings, the reason, and the findings with their changes.
func batchText(ev store.BatchEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[vulnscan] %d findings changed in one batch by %s", len(ev.Findings), ev.Actor.Username)
	if ev.Comment != "" {
		fmt.Fprintf(&b, ": %s", ev.Comment)
	}
	for i, f := range ev.Findings {
		if i == batchListMax {
			fmt.Fprintf(&b, "\n… and %d more", len(ev.Findings)-batchListMax)
			break
		}
		fmt.Fprintf(&b, "\n- %s (%s) in %s", f.Title, f.ID, codeSpan(f.AffectedFile))
		for _, c := range f.Changes {
			fmt.Fprintf(&b, "; %s: %s → %s", c.Field, orNone(c.From), orNone(c.To))
		}
	}
	fmt.Fprintf(&b, "\nbatch %s", ev.BatchID)
	return b.String()
}

// buildBatch returns the calls that deliver one bulk change's event (one
// scan's share of it) to d's integration: one chat message, one comment on
// the scan's pull request or commit, or one issue in a tracker that lists
// the batch.
func buildBatch(d store.Delivery, ev store.BatchEvent, token string) ([]request, error) {
	base := strings.TrimSuffix(d.Integration.URL, "/")
	msg := batchText(ev)
	title := fmt.Sprintf("[vulnscan] %d findings triaged in one batch", len(ev.Findings))
	switch d.Integration.Kind {
	case "slack":
		return []request{{url: d.Integration.URL, body: map[string]any{"text": slackText(msg), "event": ev}}}, nil
	case "github":
		return githubComment(base, ev.Scan, token, msg, map[string]any{"body": msg}, nil)
	case "jira":
		h := map[string]string{"Accept": "application/json"}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		return []request{{url: base + "/rest/api/2/issue", headers: h, body: map[string]any{"fields": map[string]any{
			"project": map[string]any{"key": d.Integration.Project}, "summary": title,
			"description": msg, "issuetype": map[string]any{"name": "Task"}, "labels": []string{"vulnscan", "vulnscan-batch"},
		}}}}, nil
	case "linear":
		h := map[string]string{}
		if token != "" {
			h["Authorization"] = token
		}
		return []request{{url: base, headers: h, body: map[string]any{
			"query":     "mutation IssueCreate($input: IssueCreateInput!) { issueCreate(input: $input) { success issue { id identifier } } }",
			"variables": map[string]any{"input": map[string]any{"teamId": d.Integration.Project, "title": title, "description": msg}},
		}, parse: linearCheck("issueCreate", "")}}, nil
	}
	return nil, fmt.Errorf("unknown integration kind %q", d.Integration.Kind)
}
