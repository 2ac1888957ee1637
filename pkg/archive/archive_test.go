package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type entry struct {
	name, body, link string
	mode             fs.FileMode
	typ              byte
}

// Zip builds a zip archive, for tests.
func buildZip(t testing.TB, entries []entry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		require.NoError(t, err)
		body := e.body
		if mode&fs.ModeSymlink != 0 {
			body = e.link
		}
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func buildTarGz(t testing.TB, entries []entry) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if typ != tar.TypeReg {
			h.Size = 0
		}
		require.NoError(t, tw.WriteHeader(h))
		if typ == tar.TypeReg {
			_, err := tw.Write([]byte(e.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func TestExtract(t *testing.T) {
	t.Parallel()
	good := []entry{{name: "app/", mode: fs.ModeDir | 0o755}, {name: "app/main.go", body: "package main\n"}, {name: "README.md", body: "hi"}, {name: "app/link", link: "main.go", mode: fs.ModeSymlink | 0o777}}
	goodTar := []entry{{name: "app/main.go", body: "package main\n"}, {name: "README.md", body: "hi"}, {name: "app/link", link: "main.go", typ: tar.TypeSymlink}}
	tests := []struct {
		name    string
		ct      string
		data    []byte
		wantErr string
	}{
		{"zip ok", TypeZip, buildZip(t, good), ""},
		{"tar ok", TypeTarGz, buildTarGz(t, goodTar), ""},
		{"zip dotdot", TypeZip, buildZip(t, []entry{{name: "../evil", body: "x"}}), "leaves the archive root"},
		{"zip absolute", TypeZip, buildZip(t, []entry{{name: "/etc/passwd", body: "x"}}), "absolute path"},
		{"zip link out", TypeZip, buildZip(t, []entry{{name: "a/l", link: "../../etc/passwd", mode: fs.ModeSymlink | 0o777}}), "points outside"},
		{"zip link abs", TypeZip, buildZip(t, []entry{{name: "l", link: "/etc/passwd", mode: fs.ModeSymlink | 0o777}}), "points outside"},
		{"tar dotdot", TypeTarGz, buildTarGz(t, []entry{{name: "a/../../x", body: "x"}}), "leaves the archive root"},
		{"tar hardlink out", TypeTarGz, buildTarGz(t, []entry{{name: "h", link: "../x", typ: tar.TypeLink}}), "points outside"},
		{"tar device", TypeTarGz, buildTarGz(t, []entry{{name: "dev", typ: tar.TypeChar}}), "special file"},
		{"tar fifo", TypeTarGz, buildTarGz(t, []entry{{name: "p", typ: tar.TypeFifo}}), "special file"},
		{"not zip", TypeZip, []byte("hello"), "not a valid zip"},
		{"not gzip", TypeTarGz, []byte("hello"), "not a valid gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dest := t.TempDir()
			sum, err := Extract(bytes.NewReader(tt.data), int64(len(tt.data)), tt.ct, dest, DefaultLimits)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrUnsafe)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, 2, sum.Files)
			require.Len(t, sum.ContentHash, 40)
			b, err := os.ReadFile(filepath.Join(dest, "app", "main.go"))
			require.NoError(t, err)
			require.Equal(t, "package main\n", string(b))
			_, err = os.Lstat(filepath.Join(dest, "app", "link"))
			require.True(t, errors.Is(err, fs.ErrNotExist), "links are not recreated")
		})
	}
}

func TestContentHashStable(t *testing.T) {
	t.Parallel()
	z := buildZip(t, []entry{{name: "a.txt", body: "1"}, {name: "b/c.txt", body: "2"}})
	g := buildTarGz(t, []entry{{name: "b/c.txt", body: "2"}, {name: "./a.txt", body: "1"}})
	s1, err := Extract(bytes.NewReader(z), int64(len(z)), TypeZip, "", DefaultLimits)
	require.NoError(t, err)
	s2, err := Extract(bytes.NewReader(g), int64(len(g)), TypeTarGz, "", DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, s1.ContentHash, s2.ContentHash)
}

func TestLimits(t *testing.T) {
	t.Parallel()
	// A zip bomb in miniature: highly compressible content past the limit.
	z := buildZip(t, []entry{{name: "big", body: string(bytes.Repeat([]byte{'a'}, 1<<20))}})
	_, err := Extract(bytes.NewReader(z), int64(len(z)), TypeZip, t.TempDir(), Limits{MaxBytes: 1 << 19, MaxEntries: 10, MaxPath: 100, MaxDepth: 10})
	require.ErrorContains(t, err, "expands to more than")
	many := buildTarGz(t, []entry{{name: "a", body: "1"}, {name: "b", body: "2"}, {name: "c", body: "3"}})
	_, err = Extract(bytes.NewReader(many), int64(len(many)), TypeTarGz, "", Limits{MaxBytes: 1 << 20, MaxEntries: 2, MaxPath: 100, MaxDepth: 10})
	require.ErrorContains(t, err, "more than 2 entries")
}

// TestEntryLimits: every entry counts (directories listed or implied, links),
// and names are bounded in length and depth before anything is created.
func TestEntryLimits(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxBytes: 1 << 20, MaxEntries: 5, MaxPath: 64, MaxDepth: 4}
	dirs := func(n int) []entry {
		var es []entry
		for i := 0; i < n; i++ {
			es = append(es, entry{name: fmt.Sprintf("d%d/", i), mode: fs.ModeDir | 0o755, typ: tar.TypeDir})
		}
		return es
	}
	tests := []struct {
		name    string
		ct      string
		data    []byte
		wantErr string
	}{
		{"zip five directories", TypeZip, buildZip(t, dirs(5)), ""},
		{"zip six directories", TypeZip, buildZip(t, dirs(6)), "more than 5 entries"},
		{"tar six directories", TypeTarGz, buildTarGz(t, dirs(6)), "more than 5 entries"},
		{"implied parents count", TypeTarGz, buildTarGz(t, []entry{{name: "a/b/c/d", body: "x"}, {name: "a/b/e/f", body: "x"}}), "more than 5 entries"},
		{"implied parents once", TypeZip, buildZip(t, []entry{{name: "a/b/c", body: "x"}, {name: "a/b/d", body: "x"}, {name: "a/", mode: fs.ModeDir | 0o755}}), ""},
		{"links count", TypeTarGz, buildTarGz(t, []entry{{name: "l1", link: "x", typ: tar.TypeSymlink}, {name: "l2", link: "x", typ: tar.TypeSymlink},
			{name: "l3", link: "x", typ: tar.TypeSymlink}, {name: "l4", link: "x", typ: tar.TypeSymlink}, {name: "l5", link: "x", typ: tar.TypeSymlink}, {name: "l6", link: "x", typ: tar.TypeSymlink}}), "more than 5 entries"},
		{"too deep", TypeTarGz, buildTarGz(t, []entry{{name: "a/b/c/d/e", body: "x"}}), "deeper than 4 levels"},
		{"too deep directory", TypeZip, buildZip(t, []entry{{name: "a/b/c/d/e/", mode: fs.ModeDir | 0o755}}), "deeper than 4 levels"},
		{"dots do not hide depth", TypeTarGz, buildTarGz(t, []entry{{name: "./././././a", body: "x"}}), "deeper than 4 levels"},
		{"too long", TypeZip, buildZip(t, []entry{{name: strings.Repeat("n", 65), body: "x"}}), "longer than 64 bytes"},
		{"link target too long", TypeTarGz, buildTarGz(t, []entry{{name: "l", link: strings.Repeat("n", 65), typ: tar.TypeSymlink}}), "longer than 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dest := t.TempDir()
			_, err := Extract(bytes.NewReader(tt.data), int64(len(tt.data)), tt.ct, dest, lim)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnsafe)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestDeepPathBomb: a few hundred bytes of tar.gz naming one 30,000-level
// path is refused from its header, before any directory exists.
func TestDeepPathBomb(t *testing.T) {
	t.Parallel()
	data := buildTarGz(t, []entry{{name: strings.Repeat("a/", 30_000) + "f", body: "x"}})
	require.Less(t, len(data), 1024)
	dest := t.TempDir()
	_, err := Extract(bytes.NewReader(data), int64(len(data)), TypeTarGz, dest, DefaultLimits)
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, "longer than 1024 bytes")
	left, err := os.ReadDir(dest)
	require.NoError(t, err)
	require.Empty(t, left, "nothing was created")
}

// TestDirectoryZipBomb: a zip of 200,000 empty directories (about 17 MB;
// the reported one held 243,000) is refused with the default limits before
// the standard reader loads its central directory: no directory is created
// and the check allocates a small fraction of what loading would.
// Not parallel, so that the allocation figure is this test's own.
func TestDirectoryZipBomb(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < 200_000; i++ {
		h := &zip.FileHeader{Name: fmt.Sprintf("%06d/", i), Method: zip.Store}
		h.SetMode(fs.ModeDir | 0o755)
		_, err := zw.CreateHeader(h)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	data := buf.Bytes()
	dest := t.TempDir()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Extract(bytes.NewReader(data), int64(len(data)), TypeZip, dest, DefaultLimits)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, "more than 100000 entries")
	left, err := os.ReadDir(dest)
	require.NoError(t, err)
	require.Empty(t, left, "nothing was created")
	// Loading the directory takes ~200 bytes per entry (40 MB here); the
	// streaming count needs its read buffers only.
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20))
}

func FuzzExtract(f *testing.F) {
	f.Add([]byte{}, true)
	f.Add(buildZip(f, []entry{{name: "a/b.txt", body: "x"}, {name: "../c", body: "y"}}), true)
	f.Add(buildZip(f, []entry{{name: "l", link: "../../x", mode: fs.ModeSymlink | 0o777}}), true)
	f.Add(buildTarGz(f, []entry{{name: "a/b.txt", body: "x"}, {name: "h", link: "a/b.txt", typ: tar.TypeLink}}), false)
	f.Add(buildTarGz(f, []entry{{name: "/abs", body: "x"}}), false)
	f.Fuzz(func(t *testing.T, data []byte, isZip bool) {
		ct := TypeTarGz
		if isZip {
			ct = TypeZip
		}
		dest := t.TempDir()
		sum, err := Extract(bytes.NewReader(data), int64(len(data)), ct, dest, Limits{MaxBytes: 1 << 20, MaxEntries: 100, MaxPath: 256, MaxDepth: 16})
		if err != nil {
			return
		}
		require.LessOrEqual(t, sum.Bytes, int64(1<<20))
		// Nothing may be written outside dest, and nothing but regular files and directories inside.
		err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				t.Fatalf("extracted a non-regular file %s", p)
			}
			return nil
		})
		require.NoError(t, err)
	})
}
