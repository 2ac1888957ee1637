// Package e2e drives the vulnscan command-line binary against a running
// system (the real gateway and services over real PostgreSQL and Redis).
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/gittest"
	"github.com/vulnscan/vulnscan/pkg/sarif/sariftest"
	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	systest.Main(m, &sys, map[string]string{"VULNSCAN_RATE_LIMIT": "1000:2000"})
}

// cleanApp is an application with nothing to report.
const cleanApp = `from flask import Flask

app = Flask(__name__)


@app.route("/")
def index():
    return "hello"
`

// ignoredFlaw would be a finding if .gitignore did not leave it out.
const ignoredFlaw = `import os
from flask import Flask, request

app = Flask(__name__)


@app.route("/run")
def run():
    return os.popen("ls " + request.args.get("dir")).read()
`

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, files)
	return dir
}

type result struct {
	code           int
	stdout, stderr string
}

// cli runs the binary with the key (none when "") and extra environment.
func cli(t *testing.T, key string, extraEnv []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(sys.BinDir(), "vulnscan"), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + os.TempDir(),
		"VULNSCAN_URL=" + strings.TrimSuffix(sys.BaseURL, "/v1"), "VULNSCAN_API_KEY=" + key, "CI=true"}, extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code, stdout.String(), stderr.String()}
}

func requireValidSARIF(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sariftest.Validate(t, b)
	return b
}

// located is what a result says about where and what it is.
type located struct {
	Rule, File  string
	Line        int
	Fingerprint string
}

func results(t *testing.T, log []byte) []located {
	t.Helper()
	var doc struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(log, &doc))
	require.Len(t, doc.Runs, 1)
	out := []located{}
	for _, r := range doc.Runs[0].Results {
		require.Len(t, r.Locations, 1)
		pl := r.Locations[0].PhysicalLocation
		out = append(out, located{r.RuleID, pl.ArtifactLocation.URI, pl.Region.StartLine, r.PartialFingerprints["vulnscanFingerprint/v1"]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fingerprint < out[j].Fingerprint })
	return out
}

type scanJSON struct {
	ScanID   string `json:"scan_id"`
	Status   string `json:"status"`
	Failing  int    `json:"failing"`
	Findings []struct {
		ID, Severity, State, Fingerprint string
		AffectedFile                     string `json:"affected_file"`
		AffectedCode                     string `json:"affected_code"`
	} `json:"findings"`
}

func decode(t *testing.T, r result) scanJSON {
	t.Helper()
	var s scanJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &s), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	return s
}

// A scan that waits exits 1 when an open finding is at or above --fail-on,
// 0 when none is (a clean tree, or a threshold above every finding, or the
// findings triaged as false positives), and writes SARIF that validates.
func TestScanFailOnExitCodes(t *testing.T) {
	t.Parallel()
	o := sys.Org(t, 1000)
	vulnerable := tree(t, map[string]string{"app.py": systest.FlaskApp})
	out := filepath.Join(t.TempDir(), "out.sarif")

	r := cli(t, o.WriteKey, nil, "scan", vulnerable, "--wait", "--fail-on", "high", "--sarif", out, "--json")
	require.Equal(t, 1, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	s := decode(t, r)
	require.Equal(t, "completed", s.Status)
	require.NotEmpty(t, s.Findings)
	require.Positive(t, s.Failing)
	require.Contains(t, r.stderr, "at or above the --fail-on severity")
	require.NotContains(t, r.stderr, "\r", "CI=true prints plain lines, no redrawn bar")
	require.Contains(t, r.stderr, "Scan "+s.ScanID+": completed 100%")
	log := requireValidSARIF(t, out)
	require.Len(t, results(t, log), len(s.Findings), "the SARIF is the scan's export")

	// The same findings triaged away no longer fail the build: a rescan of
	// the same tree sees them again as false positives.
	for _, f := range s.Findings {
		tr := cli(t, o.WriteKey, nil, "findings", "triage", f.ID, "--state", "false_positive", "--reason", "test fixture")
		require.Equal(t, 0, tr.code, "%s", tr.stderr)
	}
	r = cli(t, o.WriteKey, nil, "scan", vulnerable, "--fail-on", "high", "--json")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	s2 := decode(t, r)
	require.Len(t, s2.Findings, len(s.Findings))
	for _, f := range s2.Findings {
		require.Equal(t, "false_positive", f.State)
	}

	clean := tree(t, map[string]string{"app.py": cleanApp})
	r = cli(t, o.WriteKey, nil, "scan", clean, "--wait", "--fail-on", "info", "--sarif", out)
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "0 findings")
	require.Empty(t, results(t, requireValidSARIF(t, out)))
}

// Usage and API errors exit 2 with the API's own message.
func TestScanErrorsExitTwo(t *testing.T) {
	t.Parallel()
	o := sys.Org(t, 1000)
	poor := sys.Org(t, 0)
	dir := tree(t, map[string]string{"app.py": systest.FlaskApp})
	tests := []struct {
		name string
		key  string
		args []string
		msg  string
	}{
		{"no key", "", []string{"scan", dir, "--wait"}, "VULNSCAN_API_KEY is not set"},
		{"unknown flag", o.WriteKey, []string{"scan", dir, "--frobnicate"}, "flag provided but not defined: -frobnicate"},
		{"bad threshold", o.WriteKey, []string{"scan", dir, "--fail-on", "severe"}, "--fail-on must be one of critical, high, medium, low, info"},
		{"dir and repo", o.WriteKey, []string{"scan", dir, "--repo", "https://git.example.com/a.git"}, "give a directory or --repo, not both"},
		{"base without repo", o.WriteKey, []string{"scan", dir, "--base", "main"}, "--base needs --repo"},
		{"local with targets", o.WriteKey, []string{"scan", "--local", dir, "--target-url", "https://example.com"}, "--local scans a directory"},
		{"read-only key", o.ReadKey, []string{"scan", dir, "--wait", "--fail-on", "high"}, "403 Forbidden: API key missing required scope: write"},
		{"insufficient credits", poor.WriteKey, []string{"scan", dir, "--wait", "--fail-on", "high"}, "402 Payment Required: Insufficient credits to start this scan"},
		{"unknown finding", o.ReadKey, []string{"findings", "show", "00000000-0000-4000-8000-000000000000"}, "404 Not Found: Finding not found"},
		{"bad list parameter", o.ReadKey, []string{"findings", "list", "--limit", "500"}, "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, tc.key, nil, tc.args...)
			require.Equal(t, 2, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			require.Contains(t, r.stderr, tc.msg)
		})
	}
}

// --local runs the engine on the machine and reports exactly what a server
// scan of the same tree reports: the same rule ids, files, lines and
// fingerprints, in SARIF that validates; .gitignore is respected by both.
// A file named and written in ISO-8859-1 reads the same in both (the
// server's worker and the local run report text through
// finding.ReportText).
func TestLocalMatchesServerScan(t *testing.T) {
	t.Parallel()
	o := sys.Org(t, 1000)
	dir := tree(t, map[string]string{
		"app.py":           systest.FlaskApp,
		"lib/more.py":      strings.ReplaceAll(systest.FlaskApp, "app.db", "more.db"),
		".gitignore":       "build/\n*.log\n",
		"build/gen.py":     ignoredFlaw,
		"lib/.gitignore":   "/skip.py\n",
		"lib/skip.py":      ignoredFlaw,
		"lib/debug.log":    "AKIAIOSFODNN7EXAMPLE",
		"README.md":        "# demo\n",
		"lib/sub/keep.txt": "kept\n",
		"caf\xe9.py":       strings.Replace(systest.FlaskApp, "\n", "\n# r\xe9pertoire\n", 1),
	})
	localOut := filepath.Join(t.TempDir(), "local.sarif")
	serverOut := filepath.Join(t.TempDir(), "server.sarif")

	lr := cli(t, "", nil, "scan", "--local", dir, "--sarif", localOut, "--json")
	require.Equal(t, 0, lr.code, "stdout: %s\nstderr: %s", lr.stdout, lr.stderr)
	sr := cli(t, o.WriteKey, nil, "scan", dir, "--wait", "--sarif", serverOut, "--json")
	require.Equal(t, 0, sr.code, "stdout: %s\nstderr: %s", sr.stdout, sr.stderr)

	local := results(t, requireValidSARIF(t, localOut))
	server := results(t, requireValidSARIF(t, serverOut))
	require.NotEmpty(t, server)
	require.Equal(t, server, local)
	for _, r := range local {
		require.NotEqual(t, "build/gen.py", r.File)
		require.NotEqual(t, "lib/skip.py", r.File)
	}
	files := map[string]bool{}
	for _, r := range server {
		files[r.File] = true
	}
	require.True(t, files["app.py"] && files["lib/more.py"] && files["caf%C3%A9.py"], "%v", server)

	// The JSON output agrees with the logs, and --fail-on applies locally.
	lj, sj := decode(t, lr), decode(t, sr)
	require.Len(t, lj.Findings, len(sj.Findings))
	texts := func(o scanJSON) []string {
		var out []string
		for _, f := range o.Findings {
			out = append(out, f.AffectedFile+"\n"+f.AffectedCode)
		}
		sort.Strings(out)
		return out
	}
	require.Equal(t, texts(sj), texts(lj))
	require.Contains(t, strings.Join(texts(lj), "\n"), "café.py\n")
	r := cli(t, "", nil, "scan", "--local", dir, "--fail-on", "medium")
	require.Equal(t, 1, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
}

// A tree in which no application is detected costs nothing and is not
// scanned: exit 0, an empty SARIF log, whatever --fail-on says.
func TestScanNothingToScan(t *testing.T) {
	t.Parallel()
	o := sys.Org(t, 1000)
	dir := tree(t, map[string]string{"README.md": "# notes\n"})
	out := filepath.Join(t.TempDir(), "out.sarif")
	r := cli(t, o.WriteKey, nil, "scan", dir, "--fail-on", "info", "--sarif", out, "--json")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Contains(t, r.stderr, "No application was detected")
	require.Equal(t, "not_started", decode(t, r).Status)
	require.Empty(t, results(t, requireValidSARIF(t, out)))
	b, err := sys.Do("GET", "/credits", o.ReadKey, nil)
	require.NoError(t, err)
	require.EqualValues(t, 1000, b.JSON()["balance"])
}
