package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// TestScanOfLegacyEncodings: a repository whose files are not all UTF-8 is
// estimated and scanned like any other. A snippet line in ISO-8859-1, a file
// name in it, and a manifest whose application name holds NUL are read as
// Windows-1252 text, NUL shown as U+FFFD (see wiretext). Before, the
// estimation's job failed writing its detection cache (PostgreSQL refuses
// NUL in jsonb) and was retried for hours, and the scan failed: its report
// of findings could not be marshalled.
func TestScanOfLegacyEncodings(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 100, "auto")
	latin := strings.Replace(systest.ShellApp, "def run():\n", "def run():\n    # r\xe9pertoire choisi par l'utilisateur\n", 1)
	files := map[string]string{
		"requirements.txt": "flask==3.0.0\n",
		"latin.py":         latin,
		"caf\xe9.py":       systest.ShellApp,
		"web/package.json": "{\"name\":\"shop\\u0000front\",\"version\":\"1.0.0\",\"dependencies\":{\"express\":\"4.17.0\"}}",
		"web/index.js":     "const express = require('express');\nconst app = express();\napp.listen(3000);\n",
	}
	estID, repoURL, _ := sys.Estimated(t, org.WriteKey, files)
	est, err := sys.Do("GET", "/cost-estimations/"+estID, org.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, 200, est.Status, string(est.Body))
	require.Contains(t, string(est.Body), "\"shop\uFFFDfront\"", "the application's name, NUL shown as U+FFFD")

	r := post(t, org.WriteKey, scanBody(estID, repoURL, nil))
	require.Equal(t, 201, r.Status, string(r.Body))
	st := waitScan(t, sys, org.ReadKey, r.JSON()["id"].(string), 90*time.Second)
	require.Equal(t, "completed", st["status"], "%v", st)

	f, err := sys.Do("GET", "/scans/"+r.JSON()["id"].(string)+"/findings?limit=100", org.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, 200, f.Status, string(f.Body))
	code := map[string]string{}
	for _, x := range f.JSON()["data"].([]any) {
		m := x.(map[string]any)
		code[m["affected_file"].(string)] = m["affected_code"].(string)
	}
	require.Contains(t, code, "café.py", "the file name read as Windows-1252: %v", code)
	require.Contains(t, code["latin.py"], "# répertoire choisi par l'utilisateur", "the snippet read as Windows-1252")
}
