package vocab

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/apierr"
)

func TestSeverityRank(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s     Severity
		rank  int
		lower Severity
	}{
		{Critical, 5, High}, {High, 4, Medium}, {Medium, 3, Low}, {Low, 2, Info}, {Info, 1, Info},
		{"severe", 0, Info}, {"", 0, Info}, {"CRITICAL", 0, Info},
	} {
		require.Equal(t, tc.rank, tc.s.Rank(), tc.s)
		require.Equal(t, tc.rank > 0, tc.s.Valid(), tc.s)
		require.Equal(t, tc.lower, tc.s.Lower(), tc.s)
	}
	// Values are listed most severe first, so ranks fall along the list.
	vals := Severities.Values()
	for i := 1; i < len(vals); i++ {
		require.Greater(t, vals[i-1].Rank(), vals[i].Rank())
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	s, err := Severities.Parse("severity", "high")
	require.NoError(t, err)
	require.Equal(t, High, s)

	for _, tc := range []struct {
		parse func() error
		msg   string
	}{
		{func() error { _, err := Severities.Parse("severity", "High"); return err }, "severity must be one of: critical, high, medium, low, info"},
		{func() error { _, err := FindingStates.Parse("state", "closed"); return err }, "state must be one of: open, true_positive, false_positive, accepted_risk, resolved"},
		{func() error { _, err := ScanStatuses.Parse("status", ""); return err }, "status must be one of: pending, running, completed, partial, failed, cancelled"},
		{func() error { _, err := RepoSources.Parse("repos[0].source", "gitlab"); return err }, "repos[0].source must be one of: connected, public, upload"},
		{func() error { _, err := Categories.Parse("category", "sqli"); return err }, "category must be one of: injection, xss, auth, access_control, secrets, ssrf, path_traversal, deserialization, crypto, misconfiguration, dependency, other"},
	} {
		err := tc.parse()
		var ae *apierr.Error
		require.ErrorAs(t, err, &ae)
		require.Equal(t, http.StatusBadRequest, ae.Status)
		require.Equal(t, tc.msg, ae.Message)
	}
}

func TestValuesIsACopy(t *testing.T) {
	t.Parallel()
	v := Severities.Values()
	v[0] = "mutated"
	require.Equal(t, Critical, Severities.Values()[0])
	require.True(t, EstimationStatuses.Contains("partial"))
	require.False(t, KeyStatuses.Contains("deleted"))
	require.True(t, ScanCancelled.Terminal())
	require.False(t, ScanRunning.Terminal())
	require.True(t, EstimationFailed.Terminal())
	require.False(t, EstimationPending.Terminal())
}

func TestRepoKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://github.com/acme/app", "https://github.com/acme/app"},
		{"  HTTPS://GitHub.COM/acme/app.git/ ", "https://github.com/acme/app"},
		{"https://github.com/acme/app/", "https://github.com/acme/app"},
		{"https://user:token@github.com/acme/app.git", "https://github.com/acme/app"},
		{"https://github.com/acme/app?ref=main#readme", "https://github.com/acme/app"},
		{"https://github.com/Acme/App", "https://github.com/Acme/App"},
		{"upload://0b6f9c1e", "upload://0b6f9c1e"},
		{"/srv/git/app.git", "/srv/git/app"},
		{"%zz/app.git/", "%zz/app"},
		{"https://github.com/acme/app.git.git//", "https://github.com/acme/app"},
	} {
		require.Equal(t, tc.want, RepoKey(tc.in), tc.in)
	}
	require.Equal(t, RepoKey("https://github.com/acme/app"), RepoKey("https://GITHUB.com/acme/app.git"))
}

func FuzzRepoKey(f *testing.F) {
	f.Add("https://user:pw@GitHub.com/a/b.git/?x#y")
	f.Fuzz(func(t *testing.T, s string) {
		k := RepoKey(s)
		require.Equal(t, k, RepoKey(k), "RepoKey is idempotent")
	})
}

func TestPage(t *testing.T) {
	t.Parallel()
	i := func(v int32) *int32 { return &v }
	for _, tc := range []struct {
		page, limit *int32
		p, l        int32
		msg         string
	}{
		{nil, nil, 1, 15, ""},
		{i(3), i(100), 3, 100, ""},
		{i(0), nil, 0, 0, "page must be at least 1"},
		{nil, i(0), 0, 0, "limit must be between 1 and 100"},
		{nil, i(101), 0, 0, "limit must be between 1 and 100"},
		{i(1 << 30), i(100), 0, 0, "page is too large"},
	} {
		p, l, err := Page(tc.page, tc.limit, DefaultPageLimit)
		if tc.msg != "" {
			var ae *apierr.Error
			require.ErrorAs(t, err, &ae)
			require.Equal(t, tc.msg, ae.Message)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, [2]int32{tc.p, tc.l}, [2]int32{p, l})
	}
}
