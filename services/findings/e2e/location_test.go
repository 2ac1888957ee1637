package e2e

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// The JSON API carries each finding's line and fingerprint in the lists,
// the single read and the JSON export, as CSV and SARIF do; a finding
// without a source location has line null.
func TestFindingLineAndFingerprint(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scan := newScan(t, o, "https://git.example.com/acme/location")
	fp := "loc-" + uuid.NewString()
	located := fnd(fp, "high")
	located.StartLine, located.EndLine = 42, 43
	live := fnd(fp+"-live", "medium")
	live.AffectedFile, live.StartLine, live.EndLine = "", 0, 0
	ids := report(t, scan, located, live)

	check := func(t *testing.T, f map[string]any) {
		t.Helper()
		switch f["id"] {
		case ids[0]:
			require.EqualValues(t, 42, f["line"])
			require.Equal(t, fp, f["fingerprint"])
		case ids[1]:
			require.Contains(t, f, "line")
			require.Nil(t, f["line"])
			require.Equal(t, fp+"-live", f["fingerprint"])
		default:
			t.Fatalf("unexpected finding %v", f["id"])
		}
	}
	for _, path := range []string{"/findings?scan_id=" + scan, "/scans/" + scan + "/findings"} {
		r := do(t, "GET", path, o.ReadKey, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		data := r.JSON()["data"].([]any)
		require.Len(t, data, 2)
		for _, x := range data {
			check(t, x.(map[string]any))
		}
	}
	for _, id := range ids {
		r := do(t, "GET", "/findings/"+id, o.ReadKey, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		check(t, r.JSON())
	}
	r := do(t, "GET", "/scans/"+scan+"/findings/export?format=json", o.ReadKey, nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var arr []map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &arr))
	require.Len(t, arr, 2)
	for _, f := range arr {
		check(t, f)
	}
}
