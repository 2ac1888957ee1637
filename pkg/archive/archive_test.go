package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

type entry struct {
	name, body, link string
	typ              byte
}

func tgz(t testing.TB, entries ...entry) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: e.typ, Linkname: e.link, Size: int64(len(e.body))}
		if e.typ == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		require.NoError(t, tw.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write([]byte(e.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func zipOf(t testing.TB, entries ...entry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		body := e.body
		if e.link != "" {
			h.SetMode(os.ModeSymlink | 0o777)
			body = e.link
		}
		w, err := zw.CreateHeader(h)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestExtractGood(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		typ  string
		data []byte
	}{
		{"tgz", TypeGzip, tgz(t, entry{name: "app/", typ: tar.TypeDir}, entry{name: "app/main.go", body: "package main"}, entry{name: "app/link", link: "main.go", typ: tar.TypeSymlink})},
		{"zip", TypeZip, zipOf(t, entry{name: "app/main.go", body: "package main"}, entry{name: "app/link", link: "main.go"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir()
			st, err := Extract(bytes.NewReader(tc.data), tc.typ, dst, DefaultLimits)
			require.NoError(t, err)
			b, err := os.ReadFile(filepath.Join(dst, "app", "main.go"))
			require.NoError(t, err)
			require.Equal(t, "package main", string(b))
			require.Positive(t, st.Files)
		})
	}
}

func TestExtractRejects(t *testing.T) {
	t.Parallel()
	small := Limits{MaxFiles: 3, MaxTotalSize: 10}
	tests := []struct {
		name string
		typ  string
		data []byte
		lim  Limits
	}{
		{"absolute tar", TypeGzip, tgz(t, entry{name: "/etc/passwd", body: "x"}), DefaultLimits},
		{"dotdot tar", TypeGzip, tgz(t, entry{name: "a/../../evil", body: "x"}), DefaultLimits},
		{"link out tar", TypeGzip, tgz(t, entry{name: "l", link: "../../etc", typ: tar.TypeSymlink}), DefaultLimits},
		{"absolute link tar", TypeGzip, tgz(t, entry{name: "l", link: "/etc/passwd", typ: tar.TypeSymlink}), DefaultLimits},
		{"write through link", TypeGzip, tgz(t, entry{name: "d", link: ".", typ: tar.TypeSymlink}, entry{name: "d/x", body: "x"}), DefaultLimits},
		{"hard link", TypeGzip, tgz(t, entry{name: "h", link: "x", typ: tar.TypeLink}), DefaultLimits},
		{"device", TypeGzip, tgz(t, entry{name: "dev", typ: tar.TypeChar}), DefaultLimits},
		{"fifo", TypeGzip, tgz(t, entry{name: "fifo", typ: tar.TypeFifo}), DefaultLimits},
		{"too big tar", TypeGzip, tgz(t, entry{name: "big", body: "01234567890123"}), small},
		{"too many tar", TypeGzip, tgz(t, entry{name: "a"}, entry{name: "b"}, entry{name: "c"}, entry{name: "d"}), small},
		{"absolute zip", TypeZip, zipOf(t, entry{name: "/abs", body: "x"}), DefaultLimits},
		{"dotdot zip", TypeZip, zipOf(t, entry{name: "../evil", body: "x"}), DefaultLimits},
		{"backslash dotdot zip", TypeZip, zipOf(t, entry{name: `..\evil`, body: "x"}), DefaultLimits},
		{"link out zip", TypeZip, zipOf(t, entry{name: "l", link: "../../x"}), DefaultLimits},
		{"too big zip", TypeZip, zipOf(t, entry{name: "big", body: "01234567890123"}), small},
		{"not gzip", TypeGzip, []byte("hello"), DefaultLimits},
		{"not zip", TypeZip, []byte("hello"), DefaultLimits},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "root")
			require.NoError(t, os.Mkdir(dst, 0o755))
			_, err := Extract(bytes.NewReader(tc.data), tc.typ, dst, tc.lim)
			require.ErrorIs(t, err, ErrUnsafe)
			_, err = os.Stat(filepath.Join(parent, "evil"))
			require.True(t, os.IsNotExist(err), "wrote outside the root")
		})
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(tgz(f, entry{name: "a/b.txt", body: "hi"}), true)
	f.Add(zipOf(f, entry{name: "a/b.txt", body: "hi"}), false)
	f.Add(tgz(f, entry{name: "../x", body: "hi"}), true)
	f.Fuzz(func(t *testing.T, data []byte, isTar bool) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "root")
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		typ := TypeZip
		if isTar {
			typ = TypeGzip
		}
		_, _ = Extract(bytes.NewReader(data), typ, dst, Limits{MaxFiles: 50, MaxTotalSize: 1 << 20})
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Fatalf("extraction wrote outside its root: %v", entries)
		}
	})
}
