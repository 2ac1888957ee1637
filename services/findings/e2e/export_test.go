package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

func TestExport(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scan := newScan(t, o, "https://git.example.com/acme/export")
	tricky := fnd("tricky", "critical")
	tricky.Title = `Comma, "quotes" and` + "\nnewline"
	tricky.Description = "=HYPERLINK(\"http://evil\")"
	tricky.ProofOfConcept = wrapperspb.String("curl 'http://x/?q=1'")
	tricky.Category = "xss"
	var fs []*findingsv1.ReportedFinding
	fs = append(fs, tricky)
	for _, sev := range []string{"high", "medium", "low", "info"} {
		fs = append(fs, fnd("e-"+sev, sev))
	}
	// Enough findings to span several stream chunks.
	for i := 0; i < 300; i++ {
		fs = append(fs, fnd("bulk-"+string(rune('a'+i%26))+itoa(i), "low"))
	}
	ids := report(t, scan, fs...)
	unv := fnd("hidden", "critical")
	unv.Verified = false
	report(t, scan, unv)
	require.Equal(t, 200, do(t, "PATCH", "/findings/"+ids[1], o.WriteKey, map[string]any{"state": "resolved"}).Status)

	t.Run("json", func(t *testing.T) {
		t.Parallel()
		r := do(t, "GET", "/scans/"+scan+"/findings/export", o.ReadKey, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var arr []map[string]any
		require.NoError(t, json.Unmarshal(r.Body, &arr))
		require.Len(t, arr, 305)
		require.Contains(t, arr[0], "proof_of_concept")
		r = do(t, "GET", "/scans/"+scan+"/findings/export?format=json&severity=critical", o.ReadKey, nil)
		require.NoError(t, json.Unmarshal(r.Body, &arr))
		require.Len(t, arr, 1)
		require.Equal(t, tricky.Title, arr[0]["title"])
		r = do(t, "GET", "/scans/"+scan+"/findings/export?state=resolved", o.ReadKey, nil)
		require.NoError(t, json.Unmarshal(r.Body, &arr))
		require.Len(t, arr, 1)
		require.Equal(t, ids[1], arr[0]["id"])
	})

	t.Run("csv", func(t *testing.T) {
		t.Parallel()
		r := do(t, "GET", "/scans/"+scan+"/findings/export?format=csv", o.ReadKey, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		require.NoError(t, err)
		require.Len(t, recs, 306)
		require.Equal(t, "id", recs[0][0])
		var row []string
		for _, rec := range recs {
			if rec[0] == ids[0] {
				row = rec
			}
		}
		require.NotNil(t, row)
		require.Equal(t, tricky.Title, row[1])
		require.Equal(t, "'=HYPERLINK(\"http://evil\")", row[5], "formulas are neutralized")
		require.Equal(t, "curl 'http://x/?q=1'", row[10])
	})

	t.Run("sarif", func(t *testing.T) {
		t.Parallel()
		r := do(t, "GET", "/scans/"+scan+"/findings/export?format=sarif&severity=critical", o.ReadKey, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var log map[string]any
		require.NoError(t, json.Unmarshal(r.Body, &log))
		requireSARIF(t, log)
		run := log["runs"].([]any)[0].(map[string]any)
		results := run["results"].([]any)
		require.Len(t, results, 1)
		res := results[0].(map[string]any)
		require.Equal(t, "xss", res["ruleId"])
		require.Equal(t, "error", res["level"])
		require.Equal(t, map[string]any{"vulnscanFingerprint/v1": "tricky"}, res["partialFingerprints"])
		rules := run["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any)
		rule := rules[int(res["ruleIndex"].(float64))].(map[string]any)
		require.Equal(t, "xss", rule["id"])
		rel := rule["relationships"].([]any)[0].(map[string]any)["target"].(map[string]any)
		require.Equal(t, "79", rel["id"])
		require.Equal(t, "CWE", rel["toolComponent"].(map[string]any)["name"])

		r = do(t, "GET", "/scans/"+scan+"/findings/export?format=sarif", o.ReadKey, nil)
		require.NoError(t, json.Unmarshal(r.Body, &log))
		requireSARIF(t, log)
		levels := map[string]int{}
		for _, x := range log["runs"].([]any)[0].(map[string]any)["results"].([]any) {
			levels[x.(map[string]any)["level"].(string)]++
		}
		require.Equal(t, map[string]int{"error": 2, "warning": 1, "note": 302}, levels)
	})

	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		other := newOrg(t, "auto")
		for path, status := range map[string]int{
			"/scans/" + scan + "/findings/export?format=xml":     400,
			"/scans/" + scan + "/findings/export?severity=major": 400,
			"/scans/not-a-uuid/findings/export":                  400,
		} {
			require.Equal(t, status, do(t, "GET", path, o.ReadKey, nil).Status, path)
		}
		require.Equal(t, 404, do(t, "GET", "/scans/"+scan+"/findings/export", other.ReadKey, nil).Status)
	})

	t.Run("headers through the gateway", func(t *testing.T) {
		t.Parallel()
		for format, ctype := range map[string]string{"": "application/json", "json": "application/json", "csv": "text/csv; charset=utf-8", "sarif": "application/sarif+json"} {
			r := do(t, "GET", "/scans/"+scan+"/findings/export?format="+format, o.ReadKey, nil)
			require.Equal(t, 200, r.Status, "%s", r.Body)
			require.Equal(t, ctype, r.Header.Get("Content-Type"), format)
			ext := format
			if ext == "" {
				ext = "json"
			}
			require.Equal(t, `attachment; filename="findings-`+scan+`.`+ext+`"`, r.Header.Get("Content-Disposition"), format)
		}
		// Chunks are copied as they are: no blank lines between CSV records.
		r := do(t, "GET", "/scans/"+scan+"/findings/export?format=csv", o.ReadKey, nil)
		require.NotContains(t, string(r.Body), "\n\n")
		require.True(t, bytes.HasSuffix(r.Body, []byte("\n")))
	})

	t.Run("error bodies", func(t *testing.T) {
		t.Parallel()
		requireError(t, do(t, "GET", "/scans/"+scan+"/findings/export?format=xml", o.ReadKey, nil), 400, "format")
		requireError(t, do(t, "GET", "/scans/00000000-0000-4000-8000-000000000000/findings/export", o.ReadKey, nil), 404, "not found")
	})
}

// requireSARIF checks the fields the SARIF 2.1.0 schema requires.
func requireSARIF(t *testing.T, log map[string]any) {
	t.Helper()
	require.Equal(t, "2.1.0", log["version"])
	require.NotEmpty(t, log["$schema"])
	runs := log["runs"].([]any)
	require.Len(t, runs, 1)
	run := runs[0].(map[string]any)
	driver := run["tool"].(map[string]any)["driver"].(map[string]any)
	require.NotEmpty(t, driver["name"])
	for _, r := range driver["rules"].([]any) {
		rule := r.(map[string]any)
		require.NotEmpty(t, rule["id"])
		for _, rel := range rule["relationships"].([]any) {
			require.NotNil(t, rel.(map[string]any)["target"])
		}
	}
	for _, tx := range run["taxonomies"].([]any) {
		tax := tx.(map[string]any)
		require.NotEmpty(t, tax["name"])
		for _, taxon := range tax["taxa"].([]any) {
			require.NotEmpty(t, taxon.(map[string]any)["id"])
		}
	}
	levels := map[string]bool{"none": true, "note": true, "warning": true, "error": true}
	for _, x := range run["results"].([]any) {
		res := x.(map[string]any)
		msg := res["message"].(map[string]any)
		require.NotEmpty(t, msg["text"])
		require.True(t, levels[res["level"].(string)])
		for _, l := range res["locations"].([]any) {
			phys := l.(map[string]any)["physicalLocation"].(map[string]any)
			require.NotEmpty(t, phys["artifactLocation"].(map[string]any)["uri"])
			if reg, ok := phys["region"].(map[string]any); ok {
				require.GreaterOrEqual(t, reg["startLine"].(float64), 1.0)
			}
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
