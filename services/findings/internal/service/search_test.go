package service

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

func TestSearchValidation(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		req    *findingsv1.ListFindingsRequest
		want   store.Filter // search fields only
		errMsg string
	}{
		{"none", &findingsv1.ListFindingsRequest{}, store.Filter{}, ""},
		{"window", &findingsv1.ListFindingsRequest{FoundSince: "2026-01-31T01:00:00+01:00", FoundUntil: "2026-02-01T00:00:00.5Z"},
			store.Filter{FoundSince: since, FoundUntil: since.Add(24*time.Hour + 500*time.Millisecond)}, ""},
		{"empty window", &findingsv1.ListFindingsRequest{FoundSince: "2026-01-31T00:00:00Z", FoundUntil: "2026-01-31T00:00:00Z"},
			store.Filter{FoundSince: since, FoundUntil: since}, ""},
		{"since after until", &findingsv1.ListFindingsRequest{FoundSince: "2026-02-01T00:00:00Z", FoundUntil: "2026-01-31T00:00:00Z"},
			store.Filter{}, "found_since must not be after found_until"},
		{"since without zone", &findingsv1.ListFindingsRequest{FoundSince: "2026-01-31T00:00:00"}, store.Filter{}, "found_since must be an RFC 3339 time"},
		{"until a date", &findingsv1.ListFindingsRequest{FoundUntil: "2026-01-31"}, store.Filter{}, "found_until must be an RFC 3339 time"},
		{"repo normalized", &findingsv1.ListFindingsRequest{RepoUrl: "HTTPS://user:pw@Git.Example.com/acme/App.git/"},
			store.Filter{RepoKey: "https://git.example.com/acme/App"}, ""},
		{"repo blank", &findingsv1.ListFindingsRequest{RepoUrl: "   "}, store.Filter{}, "repo_url must be a repository URL"},
		{"category", &findingsv1.ListFindingsRequest{Category: "xss"}, store.Filter{Category: "xss"}, ""},
		{"category unknown", &findingsv1.ListFindingsRequest{Category: "XSS"}, store.Filter{}, "category must be one of"},
		{"tag", &findingsv1.ListFindingsRequest{Tag: "cwe-89"}, store.Filter{Tag: "cwe-89"}, ""},
		{"tag too long", &findingsv1.ListFindingsRequest{Tag: strings.Repeat("é", MaxTag+1)}, store.Filter{}, "tag must be at most 200 characters"},
		{"file", &findingsv1.ListFindingsRequest{AffectedFile: "src/a_%"}, store.Filter{FilePrefix: "src/a_%"}, ""},
		{"file with NUL", &findingsv1.ListFindingsRequest{AffectedFile: "src\x00"}, store.Filter{}, "affected_file must not contain control characters"},
		{"q", &findingsv1.ListFindingsRequest{Q: strings.Repeat("é", MaxSearchText)}, store.Filter{Text: strings.Repeat("é", MaxSearchText)}, ""},
		{"q too long", &findingsv1.ListFindingsRequest{Q: strings.Repeat("a", MaxSearchText+1)}, store.Filter{}, "q must be at most 200 characters"},
		{"q newline", &findingsv1.ListFindingsRequest{Q: "a\nb"}, store.Filter{}, "q must not contain control characters"},
		{"q spaces", &findingsv1.ListFindingsRequest{Q: "  "}, store.Filter{}, "q must not be only spaces"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var f store.Filter
			err := search(tc.req, &f, "")
			if tc.errMsg != "" {
				require.ErrorContains(t, err, tc.errMsg)
				return
			}
			require.NoError(t, err)
			require.True(t, f.FoundSince.Equal(tc.want.FoundSince) && f.FoundUntil.Equal(tc.want.FoundUntil), "window %v %v", f.FoundSince, f.FoundUntil)
			f.FoundSince, f.FoundUntil, tc.want.FoundSince, tc.want.FoundUntil = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			require.Equal(t, tc.want, f)
		})
	}
	// In a bulk change's filter the fields are named filter.<name>.
	err := search(&findingsv1.FindingsFilter{FoundSince: "x"}, &store.Filter{}, "filter.")
	require.ErrorContains(t, err, "filter.found_since must be an RFC 3339 time")
}
