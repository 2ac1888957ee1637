package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func names(t *testing.T, data []byte) []string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var out []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out = append(out, h.Name)
	}
	sort.Strings(out)
	return out
}

func TestPackRespectsGitignore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"no ignore file", map[string]string{"a.py": "x", "src/b.py": "y"}, []string{"a.py", "src/b.py"}},
		{"git directory is never packed", map[string]string{"a.py": "x", ".git/config": "[core]", ".git/objects/ab": "z"}, []string{"a.py"}},
		{"root patterns and directories", map[string]string{".gitignore": "*.log\nbuild/\nnode_modules\n", "a.py": "x", "x.log": "l",
			"src/y.log": "l", "build/out.js": "o", "src/build/gen.py": "g", "node_modules/m/i.js": "m"}, []string{".gitignore", "a.py"}},
		{"negation", map[string]string{".gitignore": "*.env\n!example.env\n", "prod.env": "s", "example.env": "e"}, []string{".gitignore", "example.env"}},
		{"nested file applies below its directory only", map[string]string{"lib/.gitignore": "/gen.py\n", "lib/gen.py": "g", "lib/sub/gen.py": "g", "gen.py": "g"},
			[]string{"gen.py", "lib/.gitignore", "lib/sub/gen.py"}},
		{"info exclude", map[string]string{".git/info/exclude": "secret.txt\n", "secret.txt": "s", "a.py": "x"}, []string{"a.py"}},
		{"comments and blank lines", map[string]string{".gitignore": "# a comment\n\n  \ntmp/\n", "tmp/t": "t", "a.py": "x"}, []string{".gitignore", "a.py"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for n, body := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(n))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
			}
			p, err := pack(dir)
			require.NoError(t, err)
			require.Equal(t, tc.want, names(t, p.data))
			require.Equal(t, len(tc.want), p.files)
			again, err := pack(dir)
			require.NoError(t, err)
			require.Equal(t, p.data, again.data, "the same tree packs to the same bytes")
		})
	}
}

func TestPackLeavesOutLinksAndRefusesEmpty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.py"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "leak")))
	p, err := pack(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"a.py"}, names(t, p.data))
	require.Equal(t, 1, p.skipped)

	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, ".gitignore"), []byte("*\n"), 0o644))
	_, err = pack(empty)
	require.ErrorContains(t, err, "no files to scan")
	_, err = pack(filepath.Join(dir, "a.py"))
	require.ErrorContains(t, err, "is not a directory")
}

func TestFlagsAllowPositionalAnywhere(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		pos  []string
		wait bool
	}{
		{[]string{"dir", "--wait"}, []string{"dir"}, true},
		{[]string{"--wait", "dir"}, []string{"dir"}, true},
		{[]string{"dir"}, []string{"dir"}, false},
		{[]string{"--", "--odd-dir"}, []string{"--odd-dir"}, false},
	}
	for _, tc := range tests {
		fs := newFlagSet("scan")
		wait := fs.Bool("wait", false, "")
		pos, err := flags(fs, tc.args)
		require.NoError(t, err)
		require.Equal(t, tc.pos, pos, "%v", tc.args)
		require.Equal(t, tc.wait, *wait, "%v", tc.args)
	}
	_, err := flags(newFlagSet("scan"), []string{"--nope"})
	var ue usageError
	require.ErrorAs(t, err, &ue)
}
