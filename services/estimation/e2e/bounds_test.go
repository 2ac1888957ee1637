package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestArchiveBombs: the reported bombs are refused at upload with the
// spec's 400, and nothing is left on disk.
//
// Not parallel: it checks the shared scratch directory, where another test's
// upload in flight would leave a file of its own.
func TestArchiveBombs(t *testing.T) {
	org := newOrg(t)
	// A zip of 120,000 empty directories (the reported one held 243,000).
	var dirs bytes.Buffer
	zw := zip.NewWriter(&dirs)
	for i := 0; i < 120_000; i++ {
		h := &zip.FileHeader{Name: fmt.Sprintf("%06d/", i), Method: zip.Store}
		h.SetMode(fs.ModeDir | 0o755)
		_, err := zw.CreateHeader(h)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	// A few hundred bytes of tar.gz naming one 30,000-level path.
	var deep bytes.Buffer
	gz := gzip.NewWriter(&deep)
	tw := tar.NewWriter(gz)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: strings.Repeat("d/", 30_000) + "f", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}))
	_, err := tw.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	require.Less(t, deep.Len(), 1024)

	tests := []struct {
		name, ct string
		data     []byte
		msg      string
	}{
		{"directory zip", "application/zip", dirs.Bytes(), "more than 100000 entries (files, directories and links)"},
		{"deep path tar.gz", "application/gzip", deep.Bytes(), "longer than 1024 bytes"},
	}
	for _, tt := range tests {
		r := postUpload(t, org.WriteKey, tt.ct, bytes.NewReader(tt.data), int64(len(tt.data)))
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		body := r.JSON()
		require.EqualValues(t, 400, body["statusCode"])
		require.Contains(t, body["message"], tt.msg, tt.name)
	}
	// Nothing of them is kept: no scratch file and no stored blob for the org.
	left, err := os.ReadDir(filepath.Join(sys.DataDir, "tmp", "estimation"))
	require.NoError(t, err)
	for _, e := range left {
		require.False(t, strings.HasPrefix(e.Name(), "upload-"), "scratch file %s left behind", e.Name())
	}
	_, err = os.Stat(filepath.Join(sys.DataDir, "blobs", "uploads", org.ID))
	require.True(t, os.IsNotExist(err), "no blob stored for refused archives")
}

// TestUploadQuota: an organization keeps at most ESTIMATION_MAX_UPLOADS
// uploads (4 here); one more is refused with 409 and the spec's body, and
// other organizations are unaffected.
func TestUploadQuota(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	for i := 0; i < 4; i++ {
		upload(t, org.WriteKey, "application/zip", zipEntries(t, map[string]string{"main.go": fmt.Sprintf("package main // %d\n", i)}, nil))
	}
	r := postUpload(t, org.WriteKey, "application/zip", bytes.NewReader(zipEntries(t, map[string]string{"x.go": "package x\n"}, nil)), -1)
	require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
	body := r.JSON()
	require.EqualValues(t, 409, body["statusCode"])
	require.Contains(t, body["message"], "already keeps 4 uploads")
	require.NotEmpty(t, body["error"])
	upload(t, newOrg(t).WriteKey, "application/zip", zipEntries(t, map[string]string{"x.go": "package x\n"}, nil))
}
