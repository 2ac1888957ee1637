package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// The same code uploaded twice is the same repository: the second scan adds
// occurrences to the findings of the first instead of creating new ones.
func TestRepeatedUploadIsRecognized(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 1000, "auto")
	scanOnce := func() (string, map[string]bool) {
		estID, repoURL, _ := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
		r := post(t, org.WriteKey, scanBody(estID, repoURL, nil))
		require.Equal(t, 201, r.Status, string(r.Body))
		id := r.JSON()["id"].(string)
		st := waitScan(t, sys, org.ReadKey, id, 90*time.Second)
		require.Equal(t, "completed", st["status"], "%v", st)
		l, err := sys.Do("GET", "/scans/"+id+"/findings?limit=100", org.ReadKey, nil)
		require.NoError(t, err)
		require.Equal(t, 200, l.Status, string(l.Body))
		ids := map[string]bool{}
		for _, x := range l.JSON()["data"].([]any) {
			ids[x.(map[string]any)["id"].(string)] = true
		}
		require.NotEmpty(t, ids)
		return repoURL, ids
	}
	firstRepo, first := scanOnce()
	secondRepo, second := scanOnce()
	require.NotEqual(t, firstRepo, secondRepo, "two uploads, two upload ids")
	require.Equal(t, first, second, "the second scan's findings are the first scan's")
	for id := range second {
		d, err := sys.Do("GET", "/findings/"+id, org.ReadKey, nil)
		require.NoError(t, err)
		require.EqualValues(t, 2, d.JSON()["occurrence_count"])
	}
	all, err := sys.Do("GET", "/findings?limit=100", org.ReadKey, nil)
	require.NoError(t, err)
	require.EqualValues(t, len(first), all.JSON()["total"], "no new findings in the organization")
}
