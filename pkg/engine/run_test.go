package engine

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/exclude"
)

// located lists "rule repo file:line" of the findings, sorted.
func located(res Result) []string {
	var out []string
	for _, f := range res.Findings {
		out = append(out, f.RuleID+" "+f.RepoURL+" "+f.AffectedFile+":"+strconv.Itoa(f.StartLine))
	}
	sort.Strings(out)
	return out
}

const digestJava = `package app;
import java.io.FileInputStream;
import java.security.MessageDigest;
import java.util.Properties;
public class Digest {
  public byte[] sum(byte[] data) throws Exception {
    Properties p = new Properties();
    p.load(new FileInputStream("app.properties"));
    MessageDigest md = MessageDigest.getInstance(p.getProperty("hash.alg"));
    return md.digest(data);
  }
}
`

// A constant-argument rule sees the value code reads from the repository's
// own configuration, unless the configuration disagrees with itself.
func TestRunReadsRepositoryConfiguration(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"weak algorithm configured", map[string]string{"src/app.properties": "hash.alg=MD5\n"}, true},
		{"strong algorithm configured", map[string]string{"src/app.properties": "hash.alg=SHA-256\n"}, false},
		{"two files agree", map[string]string{"a/app.properties": "hash.alg=SHA1\n", "b/app.ini": "hash.alg = SHA1\n"}, true},
		{"two files disagree", map[string]string{"a/app.properties": "hash.alg=MD5\n", "b/other.properties": "hash.alg=SHA-256\n"}, false},
		{"key not configured", map[string]string{"src/app.properties": "other=MD5\n"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"src/main/java/app/Digest.java": digestJava}
			for k, v := range tc.files {
				files[k] = v
			}
			res := run(t, Input{Repos: []Repo{{URL: "r", Dir: writeTree(t, files), Primary: true}}})
			var got []string
			for _, f := range res.Findings {
				if f.RuleID == "java.crypto.weak-hash" {
					got = append(got, f.AffectedFile+":"+strconv.Itoa(f.StartLine))
				}
			}
			if tc.want {
				require.Equal(t, []string{"src/main/java/app/Digest.java:9"}, got)
			} else {
				require.Empty(t, got)
			}
		})
	}
}

// Each repository of a scan is analysed on its own: a helper in one does
// not connect to a caller in another, and findings carry their repository.
func TestRunRepositoriesAreSeparate(t *testing.T) {
	t.Parallel()
	web := writeTree(t, map[string]string{"app/views.py": `from flask import request
from app.util import shell

def h():
    shell(request.args.get("c"))
`})
	lib := writeTree(t, map[string]string{"app/util.py": `import os

def shell(c):
    os.system(c)
`})
	both := writeTree(t, map[string]string{
		"app/views.py": "from flask import request\nfrom app.util import shell\n\ndef h():\n    shell(request.args.get(\"c\"))\n",
		"app/util.py":  "import os\n\ndef shell(c):\n    os.system(c)\n",
	})
	res := run(t, Input{Repos: []Repo{
		{URL: "https://git.example/web", Dir: web, Primary: true},
		{URL: "https://git.example/lib", Dir: lib},
		{URL: "https://git.example/both", Dir: both},
	}})
	require.Equal(t, []string{"python.cmdi.shell https://git.example/both app/util.py:4"}, located(res))
}

func TestRunDoesNotFollowSymlinks(t *testing.T) {
	t.Parallel()
	outside := writeTree(t, map[string]string{"secret.py": "import os\nos.system(input())\n"})
	dir := writeTree(t, map[string]string{"app.py": "x = 1\n"})
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.py"), filepath.Join(dir, "linked.py")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "linkdir")))
	res := run(t, Input{Repos: []Repo{{URL: "r", Dir: dir, Primary: true}}})
	for _, f := range res.Findings {
		require.NotContains(t, f.AffectedFile, "linked")
		require.NotContains(t, f.AffectedFile, "linkdir")
	}
	require.Equal(t, 2, res.Stats.SkippedReasons["not_regular"], "the file link and the directory link: %v", res.Stats.SkippedReasons)
}

func TestRunExcludePatternsBeyondTheLimitAreIgnored(t *testing.T) {
	t.Parallel()
	vuln := "from flask import request\nimport os\n\ndef h():\n    os.system(request.args.get('c'))\n"
	dir := writeTree(t, map[string]string{"a/x.py": vuln, "b/x.py": vuln, "c/x.py": vuln})
	res := run(t, Input{
		Repos:         []Repo{{URL: "r", Dir: dir, Primary: true}},
		CustomContext: "exclude: a/**\nexclude: b/**\nexclude: c/**\n",
	}, WithExcludeLimits(exclude.Limits{MaxPatterns: 2, MaxBytes: 100}))
	require.Equal(t, []string{"python.cmdi.shell r c/x.py:5"}, located(res))
	require.Equal(t, 2, res.Stats.SkippedReasons["excluded"])
}

func TestRunEmptyInput(t *testing.T) {
	t.Parallel()
	res := run(t, Input{})
	require.Empty(t, res.Findings)
	require.Zero(t, res.Stats.FilesAnalyzed)

	res = run(t, Input{Repos: []Repo{{URL: "r", Dir: t.TempDir(), Primary: true}}})
	require.Empty(t, res.Findings)
	require.Zero(t, res.Stats.FilesAnalyzed)

	// Live targets without a client are not probed.
	res = run(t, Input{TargetURLs: []string{"https://example.invalid/"}})
	require.Zero(t, res.Stats.TargetsProbed)
}

func TestRunMissingDirectory(t *testing.T) {
	t.Parallel()
	_, err := New().Run(context.Background(), Input{Repos: []Repo{{URL: "r", Dir: filepath.Join(t.TempDir(), "gone"), Primary: true}}}, nil)
	require.Error(t, err)
}
