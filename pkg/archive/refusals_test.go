package archive

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/config"
)

// Names and link targets refused in both formats, beside the cases
// TestExtract already covers.
func TestNameAndLinkRefusals(t *testing.T) {
	t.Parallel()
	sym := func(name, target string) entry {
		return entry{name: name, link: target, mode: fs.ModeSymlink | 0o777, typ: tar.TypeSymlink}
	}
	for _, tc := range []struct {
		name    string
		entries []entry
		zipToo  bool
		err     string // "" means accepted
	}{
		{"backslash in a name", []entry{{name: `a\..\..\x`, body: "x"}}, true, "invalid name"},
		{"drive letter", []entry{{name: "C:/Windows/x", body: "x"}}, true, "absolute path"},
		{"drive-relative", []entry{{name: "c:x", body: "x"}}, true, "absolute path"},
		{"dot-dot that cleans inside is still refused", []entry{{name: "a/../b", body: "x"}}, true, "leaves the archive root"},
		{"trailing dot-dot", []entry{{name: "a/..", mode: fs.ModeDir | 0o755, typ: tar.TypeDir}}, true, "leaves the archive root"},
		{"a file named like the root", []entry{{name: ".", body: "x"}}, false, "invalid name"},
		{"root directory entry", []entry{{name: "./", mode: fs.ModeDir | 0o755, typ: tar.TypeDir}, {name: "a", body: "x"}}, true, ""},
		{"empty link target", []entry{sym("l", "")}, true, "points outside"},
		{"link to a drive", []entry{sym("l", "C:/x")}, true, "points outside"},
		{"link with a backslash", []entry{sym("l", `..\x`)}, true, "points outside"},
		{"link one level up from a subdirectory stays inside", []entry{sym("a/l", "../b")}, true, ""},
		{"link two levels up from a subdirectory leaves", []entry{sym("a/l", "../../b")}, true, "points outside"},
		{"link through a directory back inside", []entry{sym("a/b/l", "../../c/../d")}, true, ""},
		{"hard link resolves from the root", []entry{{name: "a/h", link: "../x", typ: tar.TypeLink}}, false, "points outside"},
		{"hard link inside", []entry{{name: "x", body: "1"}, {name: "a/h", link: "x", typ: tar.TypeLink}}, false, ""},
		{"block device", []entry{{name: "sda", typ: tar.TypeBlock}}, false, "special file"},
		{"unknown entry type", []entry{{name: "odd", typ: 'Z'}}, false, "unsupported type"},
		{"zip named pipe", []entry{{name: "p", mode: fs.ModeNamedPipe | 0o644}}, true, "special file"},
		{"zip socket", []entry{{name: "s", mode: fs.ModeSocket | 0o644}}, true, "special file"},
		{"zip device", []entry{{name: "d", mode: fs.ModeDevice | 0o644}}, true, "special file"},
	} {
		formats := map[string][]byte{}
		if !strings.HasPrefix(tc.name, "zip ") {
			formats[TypeTarGz] = buildTarGz(t, tc.entries)
		}
		if tc.zipToo {
			formats[TypeZip] = buildZip(t, tc.entries)
		}
		for ct, data := range formats {
			dest := t.TempDir()
			_, err := Extract(bytes.NewReader(data), int64(len(data)), ct, dest, DefaultLimits)
			if tc.err == "" {
				require.NoError(t, err, "%s (%s)", tc.name, ct)
				continue
			}
			require.ErrorIs(t, err, ErrUnsafe, "%s (%s)", tc.name, ct)
			require.ErrorContains(t, err, tc.err, "%s (%s)", tc.name, ct)
			require.NoFileExists(t, filepath.Join(filepath.Dir(dest), "x"), tc.name)
			require.NoFileExists(t, filepath.Join(filepath.Dir(dest), "b"), tc.name)
		}
	}
}

// The expanded-size cap is over the whole archive, not per entry: many
// small files add up; a total exactly at the cap passes.
func TestSizeCapIsCumulative(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxBytes: 30, MaxEntries: 100, MaxPath: 100, MaxDepth: 10}
	ten := strings.Repeat("z", 10)
	for _, tc := range []struct {
		name  string
		files int
		err   bool
	}{
		{"exactly at the cap", 3, false},
		{"one file over", 4, true},
	} {
		var es []entry
		for i := range tc.files {
			es = append(es, entry{name: string(rune('a'+i)) + ".txt", body: ten})
		}
		for _, ct := range []string{TypeZip, TypeTarGz} {
			data := buildTarGz(t, es)
			if ct == TypeZip {
				data = buildZip(t, es)
			}
			sum, err := Extract(bytes.NewReader(data), int64(len(data)), ct, "", lim)
			if tc.err {
				require.ErrorContains(t, err, "expands to more than 30 bytes", tc.name)
				continue
			}
			require.NoError(t, err, tc.name)
			require.Equal(t, int64(30), sum.Bytes)
			require.Equal(t, 3, sum.Files)
		}
	}
}

// Checking without a destination writes nothing and gives the same summary
// as extracting.
func TestCheckOnlyMatchesExtract(t *testing.T) {
	t.Parallel()
	data := buildTarGz(t, []entry{{name: "src/a.go", body: "package a\n"}, {name: "src/b.go", body: "package b\n"}, {name: "docs/", typ: tar.TypeDir}})
	checked, err := Extract(bytes.NewReader(data), int64(len(data)), TypeTarGz, "", DefaultLimits)
	require.NoError(t, err)
	dest := t.TempDir()
	extracted, err := Extract(bytes.NewReader(data), int64(len(data)), TypeTarGz, dest, DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, checked, extracted)
	require.Equal(t, Summary{Files: 2, Bytes: 20, ContentHash: checked.ContentHash}, checked)
	require.DirExists(t, filepath.Join(dest, "docs"))

	// The hash depends on contents and names.
	other := buildTarGz(t, []entry{{name: "src/a.go", body: "package a\n"}, {name: "src/c.go", body: "package b\n"}})
	renamed, err := Extract(bytes.NewReader(other), int64(len(other)), TypeTarGz, "", DefaultLimits)
	require.NoError(t, err)
	require.NotEqual(t, checked.ContentHash, renamed.ContentHash)
	require.Equal(t, "upload-content:"+checked.ContentHash, ContentIdentity(checked.ContentHash))
}

func TestExtractRefusesUnknownTypesAndDestinations(t *testing.T) {
	t.Parallel()
	data := buildZip(t, []entry{{name: "a", body: "x"}})
	_, err := Extract(bytes.NewReader(data), int64(len(data)), "application/x-rar", "", DefaultLimits)
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, `unsupported content type "application/x-rar"`)
	_, err = Extract(bytes.NewReader(data), int64(len(data)), TypeZip, filepath.Join(t.TempDir(), "missing"), DefaultLimits)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrUnsafe, "a missing destination is the server's problem, not the upload's")

	// A gzip stream that is not a tar.
	var gz bytes.Buffer
	gz.Write(buildTarGz(t, nil)[:10]) // gzip header only: the stream ends early
	_, err = Extract(bytes.NewReader(gz.Bytes()), int64(gz.Len()), TypeTarGz, "", DefaultLimits)
	require.ErrorIs(t, err, ErrUnsafe)

	// A file where a later entry needs a directory.
	clash := buildTarGz(t, []entry{{name: "a", body: "x"}, {name: "a/b", body: "y"}})
	_, err = Extract(bytes.NewReader(clash), int64(len(clash)), TypeTarGz, t.TempDir(), DefaultLimits)
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, "cannot be created")
}

func TestLimitsFromEnv(t *testing.T) {
	for _, k := range []string{"VULNSCAN_ARCHIVE_MAX_ENTRIES", "VULNSCAN_ARCHIVE_MAX_PATH", "VULNSCAN_ARCHIVE_MAX_DEPTH"} {
		t.Setenv(k, "")
	}
	l, err := LimitsFromEnv(config.FromOS())
	require.NoError(t, err)
	require.Equal(t, DefaultLimits, l)

	t.Setenv("VULNSCAN_ARCHIVE_MAX_ENTRIES", "500")
	t.Setenv("VULNSCAN_ARCHIVE_MAX_DEPTH", "8")
	l, err = LimitsFromEnv(config.FromOS())
	require.NoError(t, err)
	require.Equal(t, Limits{MaxBytes: DefaultLimits.MaxBytes, MaxEntries: 500, MaxPath: DefaultLimits.MaxPath, MaxDepth: 8}, l)

	t.Setenv("VULNSCAN_ARCHIVE_MAX_PATH", "0")
	_, err = LimitsFromEnv(config.FromOS())
	require.ErrorContains(t, err, "must be positive")
}

// Extraction never follows a link already in the destination: the
// destination is opened as a root, so a planted link cannot redirect a file.
func TestExtractDoesNotFollowPlantedLinks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	dest := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(dest, "a")))
	data := buildZip(t, []entry{{name: "a/x", body: "payload"}})
	_, err := Extract(bytes.NewReader(data), int64(len(data)), TypeZip, dest, DefaultLimits)
	require.ErrorIs(t, err, ErrUnsafe)
	require.NoFileExists(t, filepath.Join(outside, "x"))
}
