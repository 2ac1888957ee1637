package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// TestExcludeFloodAndDocumentQuota reproduces the exclusion flood: two
// million characters of "exclude:" lines in twenty context documents. The
// scan is refused at creation with 400 naming the field (no credits taken,
// no worker held), as is custom_context over the pattern limit; the
// organization's documents stop at their quota with 409.
func TestExcludeFloodAndDocumentQuota(t *testing.T) {
	t.Parallel()
	org, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	estID, repoURL, _ := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
	before := sys.Balance(t, org.WriteKey)

	var flood strings.Builder
	for i := 0; flood.Len() < 99_950; i++ {
		fmt.Fprintf(&flood, "exclude: **/d%d/*.x\n", i)
	}
	var ids []string
	for i := 0; i < 20; i++ {
		r, err := sys.Do("POST", "/context-documents", org.WriteKey, map[string]any{"name": fmt.Sprintf("flood %d", i), "content": flood.String()})
		require.NoError(t, err)
		require.Equal(t, 201, r.Status, string(r.Body))
		ids = append(ids, r.JSON()["id"].(string))
	}
	r, err := sys.Do("POST", "/scans", org.WriteKey, scanBody(estID, repoURL, map[string]any{"context_document_ids": ids}))
	require.NoError(t, err)
	systest.RequireError(t, r, 400, "context_document_ids: the attached documents with custom_context has")
	require.Contains(t, fmt.Sprint(r.JSON()["message"]), "at most 50 are allowed per scan")

	custom := strings.Repeat("exclude: a\n", 60)
	r, err = sys.Do("POST", "/scans", org.WriteKey, scanBody(estID, repoURL, map[string]any{"custom_context": custom}))
	require.NoError(t, err)
	systest.RequireError(t, r, 400, "custom_context has 60 exclude patterns")
	require.Equal(t, before, sys.Balance(t, org.WriteKey), "refused scans take no credits")

	// Twenty documents of ~100,000 characters reach the 2,000,000-character quota.
	r, err = sys.Do("POST", "/context-documents", org.WriteKey, map[string]any{"name": "one more", "content": flood.String()})
	require.NoError(t, err)
	systest.RequireError(t, r, 409, "more than the 2000000 allowed")

	// Within the limits the scan starts.
	r, err = sys.Do("POST", "/scans", org.WriteKey, scanBody(estID, repoURL, map[string]any{"custom_context": "exclude: tests/**\nexclude: *.min.js"}))
	require.NoError(t, err)
	require.Equal(t, 201, r.Status, string(r.Body))
}
