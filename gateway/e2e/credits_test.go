package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCreditsAndRepos(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 7)
	r := do(t, "GET", "/credits", org.ReadKey, nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, map[string]any{"balance": float64(7)}, r.JSON())

	g, err := sys.Ctl("credits", "grant", "--org", org.ID, "--amount", "5")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"org_id": org.ID, "balance": float64(12)}, g)
	s, err := sys.Ctl("credits", "show", "--org", org.ID)
	require.NoError(t, err)
	require.EqualValues(t, 12, s["balance"])

	r = do(t, "GET", "/repos", org.ReadKey, nil)
	require.Equal(t, 200, r.Status)
	require.EqualValues(t, 0, r.JSON()["total"])
	out, err := sys.CtlRaw([]string{"REPO_TOKEN=ghp_secret_value"}, "repo", "connect", "--org", org.ID, "--url", "https://git.example.com/acme/api.git", "--token-env", "REPO_TOKEN")
	require.NoError(t, err)
	require.Contains(t, string(out), `"url":"https://git.example.com/acme/api.git"`)
	r = do(t, "GET", "/repos", org.ReadKey, nil)
	require.Equal(t, 200, r.Status)
	require.NotContains(t, string(r.Body), "ghp_secret_value")
	data := r.JSON()["data"].([]any)
	require.Len(t, data, 1)
	repo := data[0].(map[string]any)
	require.Equal(t, "https://git.example.com/acme/api.git", repo["url"])
	for _, f := range []string{"id", "url", "default_branch", "created_at"} {
		require.Contains(t, repo, f)
	}
	// Another organization sees none of it.
	other := sys.Org(t, 0)
	require.EqualValues(t, 0, do(t, "GET", "/repos", other.ReadKey, nil).JSON()["total"])
	require.EqualValues(t, 0, do(t, "GET", "/credits", other.ReadKey, nil).JSON()["balance"])
}
