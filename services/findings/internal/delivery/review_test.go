package delivery

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

func TestReviewRequests(t *testing.T) {
	t.Parallel()
	w := &Worker{PublicURL: "https://vulnscan.example.com/"}
	f := store.EventFinding{ID: "f1", Title: "SQL injection", Category: "injection", Severity: "high", AffectedFile: "app.py", StartLine: 13}
	git := store.Delivery{Integration: store.Integration{Kind: "github", URL: "https://git.example.com/api/"}}
	for _, tc := range []struct {
		name           string
		scan           store.EventScan
		review, summry string
		wantPR         bool
	}{
		{"pull request", store.EventScan{RepoURL: "https://git.example.com/acme/app.git", CommitSHA: "c0ffee", PullRequest: 42},
			"https://git.example.com/api/repos/acme/app/pulls/42/comments", "https://git.example.com/api/repos/acme/app/issues/42/comments", true},
		{"head commit without a pull request number", store.EventScan{RepoURL: "https://git.example.com/acme/app", CommitSHA: "c0ffee"},
			"https://git.example.com/api/repos/acme/app/commits/c0ffee/comments", "https://git.example.com/api/repos/acme/app/commits/c0ffee/comments", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reqs, err := w.buildReview(git, store.Event{Finding: f, Scan: tc.scan}, "tok")
			require.NoError(t, err)
			require.Len(t, reqs, 1)
			require.Equal(t, tc.review, reqs[0].url)
			body := reqs[0].body.(map[string]any)
			require.Equal(t, "app.py", body["path"])
			require.Equal(t, int32(13), body["line"])
			require.Contains(t, body["body"], "https://vulnscan.example.com/v1/findings/f1")
			require.Equal(t, "Bearer tok", reqs[0].headers["Authorization"])
			if tc.wantPR {
				require.Equal(t, "c0ffee", body["commit_id"])
				require.Equal(t, "RIGHT", body["side"])
			}

			sum := store.ReviewSummary{Scan: tc.scan, Findings: []store.EventFinding{f},
				Counts: map[string]int{"critical": 0, "high": 1, "medium": 0, "low": 0, "info": 0}}
			reqs, err = w.buildSummary(git, sum, "tok")
			require.NoError(t, err)
			require.Equal(t, tc.summry, reqs[0].url)
			text := reqs[0].body.(map[string]any)["body"].(string)
			require.Contains(t, text, "1 new finding")
			require.Contains(t, text, "high: 1")
			require.Contains(t, text, "`app.py:13`: https://vulnscan.example.com/v1/findings/f1")
		})
	}
	_, err := w.buildReview(store.Delivery{Integration: store.Integration{Kind: "slack"}}, store.Event{Finding: f}, "")
	require.Error(t, err)
	_, err = w.buildReview(git, store.Event{Finding: f, Scan: store.EventScan{RepoURL: "https://git.example.com/acme/app"}}, "")
	require.ErrorIs(t, err, errNoTarget)
}
