package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/systest"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
)

// uploadStream feeds an upload's messages and keeps the response. The
// embedded stream is nil: any other call panics.
type uploadStream struct {
	grpc.ServerStream
	ctx  context.Context
	msgs []*estimationv1.CreateUploadRequest
	resp *estimationv1.CreateUploadResponse
}

func (s *uploadStream) Context() context.Context { return s.ctx }

func (s *uploadStream) Recv() (*estimationv1.CreateUploadRequest, error) {
	if len(s.msgs) == 0 {
		return nil, io.EOF
	}
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return m, nil
}

func (s *uploadStream) SendAndClose(r *estimationv1.CreateUploadResponse) error {
	s.resp = r
	return nil
}

// downloadStream collects a download.
type downloadStream struct {
	grpc.ServerStream
	ctx  context.Context
	data bytes.Buffer
}

func (s *downloadStream) Context() context.Context { return s.ctx }

func (s *downloadStream) Send(m *estimationv1.DownloadUploadResponse) error {
	s.data.Write(m.GetData())
	return nil
}

// zipOf returns a zip archive holding files (name → content).
func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	b, err := systest.Zip(files)
	require.NoError(t, err)
	return b
}

// chunks sends body in messages of n bytes, the first carrying the type.
func chunks(contentType string, body []byte, n int) []*estimationv1.CreateUploadRequest {
	var out []*estimationv1.CreateUploadRequest
	for len(body) > 0 {
		k := min(n, len(body))
		out = append(out, &estimationv1.CreateUploadRequest{Data: body[:k]})
		body = body[k:]
	}
	if len(out) == 0 {
		out = append(out, &estimationv1.CreateUploadRequest{})
	}
	out[0].ContentType = contentType
	return out
}

func (e *env) upload(ctx context.Context, msgs []*estimationv1.CreateUploadRequest) (*estimationv1.CreateUploadResponse, error) {
	s := &uploadStream{ctx: ctx, msgs: msgs}
	err := e.up.CreateUpload(s)
	return s.resp, err
}

// TestUploadRoundTrip: an archive sent in chunks is stored whole, usable in
// an estimation, and streamed back byte for byte to the scan service.
func TestUploadRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := zipOf(t, map[string]string{"go.mod": "module m\n", "main.go": "package main\n"})
	resp, err := e.upload(e.ctx, chunks("application/zip", body, 100))
	require.NoError(t, err)
	up := resp.GetUpload()
	sum := sha256.Sum256(body)
	require.Equal(t, hex.EncodeToString(sum[:]), up.GetSha256())
	require.Equal(t, int32(len(body)), up.GetSizeBytes())
	require.Equal(t, "upload://"+up.GetId(), up.GetRepoUrl())

	created, err := e.pub.CreateCostEstimation(e.ctx, &estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "upload", RepoUrl: up.GetRepoUrl()}}})
	require.NoError(t, err)
	sources, err := e.in.GetRepoSources(context.Background(), &estimationv1.GetRepoSourcesRequest{OrgId: e.org, Id: created.GetEstimation().GetId()})
	require.NoError(t, err)
	require.Equal(t, up.GetId(), sources.GetSources()[0].GetUploadId())
	require.Equal(t, "application/zip", sources.GetSources()[0].GetArchiveContentType())
	require.Equal(t, up.GetSha256(), sources.GetSources()[0].GetArchiveSha256())

	dl := &downloadStream{ctx: context.Background()}
	require.NoError(t, e.in.DownloadUpload(&estimationv1.DownloadUploadRequest{OrgId: e.org, UploadId: up.GetId()}, dl))
	require.Equal(t, body, dl.data.Bytes())

	err = e.in.DownloadUpload(&estimationv1.DownloadUploadRequest{OrgId: uuid.NewString(), UploadId: up.GetId()}, &downloadStream{ctx: context.Background()})
	requireStatus(t, err, codes.NotFound, "Upload not found")
	err = e.in.DownloadUpload(&estimationv1.DownloadUploadRequest{OrgId: e.org, UploadId: "u"}, &downloadStream{ctx: context.Background()})
	requireStatus(t, err, codes.InvalidArgument, "upload_id must be a valid UUID")

	// Another organization cannot estimate it.
	other := principal.With(context.Background(), principal.Principal{OrgID: uuid.NewString(), UserID: uuid.NewString()})
	_, err = e.pub.CreateCostEstimation(other, &estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "upload", RepoUrl: up.GetRepoUrl()}}})
	requireStatus(t, err, codes.InvalidArgument, "repos[0].repo_url is not an upload of the organization")
}

func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := zipOf(t, map[string]string{"a.txt": "a"})
	for name, tc := range map[string]struct {
		ctx  context.Context
		msgs []*estimationv1.CreateUploadRequest
		code codes.Code
		msg  string
	}{
		"anonymous":    {context.Background(), chunks("application/zip", good, 1<<20), codes.Unauthenticated, "Missing API key"},
		"no messages":  {e.ctx, nil, codes.InvalidArgument, "Content-Type must be application/zip or application/gzip"},
		"wrong type":   {e.ctx, chunks("text/plain", good, 1<<20), codes.InvalidArgument, "Content-Type must be application/zip or application/gzip"},
		"empty body":   {e.ctx, chunks("application/zip", nil, 1), codes.InvalidArgument, "Upload body is empty"},
		"not a zip":    {e.ctx, chunks("application/zip", []byte("plain text, not an archive"), 1<<20), codes.InvalidArgument, ""},
		"unsafe entry": {e.ctx, chunks("application/zip", zipOf(t, map[string]string{"../escape": "x"}), 1<<20), codes.InvalidArgument, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp, err := e.upload(tc.ctx, tc.msgs)
			require.Nil(t, resp)
			if tc.msg == "" {
				require.Equal(t, tc.code, status.Code(err), "%v", err)
				return
			}
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
}

// TestUploadQuota: the organization's third upload is refused with 409
// when it may keep two.
func TestUploadQuota(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := zipOf(t, map[string]string{"a.txt": "a"})
	for range 2 {
		_, err := e.upload(e.ctx, chunks("application/zip", body, 1<<20))
		require.NoError(t, err)
	}
	_, err := e.upload(e.ctx, chunks("application/zip", body, 1<<20))
	requireStatus(t, err, codes.AlreadyExists,
		"Upload refused: the organization already keeps 2 uploads, the most allowed; unused uploads are deleted after the retention period")
}

// TestRunEstimatesAnUpload: the estimation job unpacks an upload, detects
// its application and prices it; a second estimation of the same content
// is answered from the detection cache with the same result.
func TestRunEstimatesAnUpload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := zipOf(t, map[string]string{
		"go.mod":  "module example.com/acme/orders\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.9.1\n",
		"main.go": "package main\n\nfunc main() {\n\tr := gin.Default()\n\t_ = r\n}\n",
	})
	resp, err := e.upload(e.ctx, chunks("application/zip", body, 1<<20))
	require.NoError(t, err)
	url := resp.GetUpload().GetRepoUrl()
	ctx := context.Background()

	var results []*estimationv1.RepoResult
	for range 2 {
		created, err := e.pub.CreateCostEstimation(e.ctx, &estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "upload", RepoUrl: url}}})
		require.NoError(t, err)
		id := created.GetEstimation().GetId()
		require.NoError(t, e.pub.Run(ctx, id))
		require.NoError(t, e.pub.Run(ctx, id), "running an ended estimation again changes nothing")
		got, err := e.pub.GetCostEstimation(e.ctx, &estimationv1.GetCostEstimationRequest{Id: id})
		require.NoError(t, err)
		require.Equal(t, "completed", got.GetEstimation().GetStatus())
		require.Equal(t, int32(1), got.GetEstimation().GetTotalCredits())
		require.Len(t, got.GetEstimation().GetRepoResults(), 1)
		results = append(results, got.GetEstimation().GetRepoResults()[0])
	}
	first, second := results[0], results[1]
	require.False(t, first.GetFromCache())
	require.True(t, second.GetFromCache())
	require.Len(t, first.GetApplications(), 1)
	require.Equal(t, "orders", first.GetApplications()[0].GetAppName())
	require.Equal(t, "Go 1.22 Gin web service", first.GetApplications()[0].GetArchitecture())
	require.Equal(t, first.GetApplications()[0].GetArchitecture(), second.GetApplications()[0].GetArchitecture())
	require.Equal(t, first.GetCommitSha(), second.GetCommitSha(), "an upload's commit is its content hash")
	require.Len(t, first.GetCommitSha(), 40)

	err = e.pub.Run(ctx, uuid.NewString())
	require.ErrorContains(t, err, "does not exist")
}
