package delivery

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

func batchOf(n int) store.BatchEvent {
	ev := store.BatchEvent{Event: store.EventBulkUpdated, BatchID: "b-1", Comment: "vendor fix pending",
		Scan:  store.EventScan{ID: "s-1", RepoURL: "https://git.example.com/acme/app.git", CommitSHA: "abc"},
		Actor: store.EventActor{Username: "ana", Source: "api"}}
	from, to := "open", "accepted_risk"
	for i := range n {
		ev.Findings = append(ev.Findings, store.BatchFinding{
			EventFinding: store.EventFinding{ID: fmt.Sprintf("f-%d", i), Title: fmt.Sprintf("SQL injection %d", i), AffectedFile: "app.py"},
			Changes:      []store.Change{{Field: "state", From: &from, To: &to}},
		})
	}
	return ev
}

func TestBatchText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n        int
		listed   int
		moreLine string
	}{
		{n: 1, listed: 1},
		{n: batchListMax, listed: batchListMax},
		{n: 1000, listed: batchListMax, moreLine: "… and 950 more"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			msg := batchText(batchOf(tc.n))
			require.True(t, strings.HasPrefix(msg, fmt.Sprintf("[vulnscan] %d findings changed in one batch by ana: vendor fix pending", tc.n)), msg)
			require.Equal(t, tc.listed, strings.Count(msg, "\n- "))
			require.Contains(t, msg, "state: open → accepted_risk")
			require.True(t, strings.HasSuffix(msg, "\nbatch b-1"))
			if tc.moreLine != "" {
				require.Contains(t, msg, tc.moreLine)
			} else {
				require.NotContains(t, msg, "more")
			}
		})
	}
}

func TestBuildBatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind, url, wantURL string
		pr                 int32
		commit             string
		wantErr            bool
	}{
		{kind: "slack", url: "https://hooks.example.com/x", wantURL: "https://hooks.example.com/x"},
		{kind: "github", url: "https://api.example.com", commit: "abc", wantURL: "https://api.example.com/repos/acme/app/commits/abc/comments"},
		{kind: "github", url: "https://api.example.com", pr: 7, commit: "abc", wantURL: "https://api.example.com/repos/acme/app/issues/7/comments"},
		{kind: "github", url: "https://api.example.com", wantErr: true},
		{kind: "jira", url: "https://jira.example.com/", wantURL: "https://jira.example.com/rest/api/2/issue"},
		{kind: "linear", url: "https://linear.example.com/graphql", wantURL: "https://linear.example.com/graphql"},
		{kind: "teams", url: "https://x.example.com", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.kind+tc.wantURL, func(t *testing.T) {
			ev := batchOf(3)
			ev.Scan.PullRequest, ev.Scan.CommitSHA = tc.pr, tc.commit
			reqs, err := buildBatch(store.Delivery{Integration: store.Integration{Kind: tc.kind, URL: tc.url, Project: "VS"}}, ev, "tok")
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Len(t, reqs, 1, "one call per batch")
			require.Equal(t, tc.wantURL, reqs[0].url)
		})
	}
}
