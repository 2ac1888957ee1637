package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/systest"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
)

type uploaded struct {
	ID        string `json:"id"`
	RepoURL   string `json:"repo_url"`
	SizeBytes int    `json:"size_bytes"`
	SHA256    string `json:"sha256"`
	CreatedAt string `json:"created_at"`
}

func postUpload(t *testing.T, key, contentType string, body io.Reader, length int64) systest.Response {
	t.Helper()
	req, err := http.NewRequest("POST", sys.BaseURL+"/uploads", body)
	require.NoError(t, err)
	req.ContentLength = length
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return systest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func upload(t *testing.T, key, contentType string, data []byte) uploaded {
	t.Helper()
	r := postUpload(t, key, contentType, bytes.NewReader(data), int64(len(data)))
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var u uploaded
	require.NoError(t, json.Unmarshal(r.Body, &u))
	return u
}

func zipOf(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	require.NoError(t, zw.AddFS(os.DirFS(dir)))
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func zipEntries(t *testing.T, entries map[string]string, links map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for n, b := range entries {
		w, err := zw.Create(n)
		require.NoError(t, err)
		_, _ = w.Write([]byte(b))
	}
	for n, target := range links {
		h := &zip.FileHeader{Name: n}
		h.SetMode(fs.ModeSymlink | 0o777)
		w, err := zw.CreateHeader(h)
		require.NoError(t, err)
		_, _ = w.Write([]byte(target))
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestUploads(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	data := zipOf(t, filepath.Join(fixtures, "monorepo"))
	u := upload(t, org.WriteKey, "application/zip", data)
	sum := sha256.Sum256(data)
	require.Equal(t, hex.EncodeToString(sum[:]), u.SHA256)
	require.Equal(t, len(data), u.SizeBytes)
	require.Equal(t, "upload://"+u.ID, u.RepoURL)
	require.NotEmpty(t, u.CreatedAt)

	e := estimate(t, org.WriteKey, repo{"source": "upload", "repo_url": u.RepoURL})
	require.Equal(t, "completed", e.Status, e.RepoResults)
	rr := e.RepoResults[0]
	require.Regexp(t, hex40, rr.CommitSHA)
	require.Equal(t, "", rr.Branch)
	var roots []string
	for _, a := range rr.Applications {
		roots = append(roots, a.AppRootPath)
	}
	require.ElementsMatch(t, []string{"services/api", "services/web", "services/worker"}, roots)
	require.GreaterOrEqual(t, e.TotalCredits, 3)

	again := estimate(t, org.WriteKey, repo{"source": "upload", "repo_url": u.RepoURL})
	require.True(t, again.RepoResults[0].FromCache)
	require.Equal(t, rr.CommitSHA, again.RepoResults[0].CommitSHA)

	// The scan worker can download the archive exactly as uploaded.
	cc, err := sys.Dial("estimation", mtls.Scan, false)
	require.NoError(t, err)
	defer cc.Close()
	ic := estimationv1.NewEstimationInternalServiceClient(cc)
	src, err := ic.GetRepoSources(context.Background(), &estimationv1.GetRepoSourcesRequest{OrgId: org.ID, Id: e.ID})
	require.NoError(t, err)
	require.Equal(t, u.ID, src.GetSources()[0].GetUploadId())
	require.Equal(t, rr.CommitSHA, src.GetSources()[0].GetCommitSha())
	stream, err := ic.DownloadUpload(context.Background(), &estimationv1.DownloadUploadRequest{OrgId: org.ID, UploadId: u.ID})
	require.NoError(t, err)
	var got []byte
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, m.GetData()...)
	}
	require.Equal(t, data, got)
	_, err = ic.DownloadUpload(context.Background(), &estimationv1.DownloadUploadRequest{OrgId: newOrg(t).ID, UploadId: u.ID})
	if err == nil {
		s, _ := ic.DownloadUpload(context.Background(), &estimationv1.DownloadUploadRequest{OrgId: newOrg(t).ID, UploadId: u.ID})
		_, err = s.Recv()
	}
	require.Equal(t, codes.NotFound, status.Code(err))
}

func TestMaliciousUploads(t *testing.T) {
	t.Parallel()
	org := newOrg(t)
	tests := []struct {
		name, ct string
		data     []byte
		status   int
		msg      string
	}{
		{"zip slip", "application/zip", zipEntries(t, map[string]string{"../../etc/cron.d/x": "boom"}, nil), 400, "leaves the archive root"},
		{"absolute", "application/zip", zipEntries(t, map[string]string{"/etc/passwd": "x"}, nil), 400, "absolute path"},
		{"link out", "application/zip", zipEntries(t, map[string]string{"a.txt": "x"}, map[string]string{"l": "../../../etc/shadow"}), 400, "points outside"},
		{"not an archive", "application/gzip", []byte("plain text"), 400, "not a valid gzip"},
		{"wrong type", "text/plain", []byte("x"), 400, "Content-Type"},
		{"empty", "application/zip", nil, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := postUpload(t, org.WriteKey, tt.ct, bytes.NewReader(tt.data), int64(len(tt.data)))
			require.Equal(t, tt.status, r.Status, string(r.Body))
			require.Contains(t, fmt.Sprint(r.JSON()["message"]), tt.msg)
		})
	}
	r := postUpload(t, org.ReadKey, "application/zip", bytes.NewReader(zipOf(t, filepath.Join(fixtures, "go-gin"))), -1)
	require.Equal(t, http.StatusForbidden, r.Status)
	// Over 100 MiB: 413, whether the length is declared or not.
	big := int64(100<<20) + 1
	r = postUpload(t, org.WriteKey, "application/zip", io.LimitReader(zeros{}, big), big)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
	r = postUpload(t, org.WriteKey, "application/zip", io.LimitReader(zeros{}, big), -1)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, string(r.Body))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
