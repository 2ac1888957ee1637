package service_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/principal"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// exportStream collects what an export sends. The embedded stream is nil:
// any other call panics.
type exportStream struct {
	grpc.ServerStream
	ctx         context.Context
	header      metadata.MD
	body        bytes.Buffer
	contentType string
}

func (s *exportStream) Context() context.Context        { return s.ctx }
func (s *exportStream) SendHeader(md metadata.MD) error { s.header = md; return nil }
func (s *exportStream) Send(b *httpbody.HttpBody) error {
	s.contentType = b.GetContentType()
	s.body.Write(b.GetData())
	return nil
}

func (e *env) export(ctx context.Context, req *findingsv1.ExportScanFindingsRequest) (*exportStream, error) {
	s := &exportStream{ctx: ctx}
	return s, e.pub.ExportScanFindings(req, s)
}

func TestExportFormats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	js, err := e.export(e.ctx, &findingsv1.ExportScanFindingsRequest{Id: e.scan.ID})
	require.NoError(t, err)
	require.Equal(t, "application/json", js.contentType)
	require.Equal(t, []string{`attachment; filename="findings-` + e.scan.ID + `.json"`}, js.header.Get("content-disposition"))
	var rows []map[string]any
	require.NoError(t, json.Unmarshal(js.body.Bytes(), &rows))
	require.Len(t, rows, 3)
	titles := map[string]bool{}
	for _, r := range rows {
		titles[r["title"].(string)] = true
		require.Equal(t, e.scan.ID, r["scan_id"])
	}
	require.True(t, titles["=Hard-coded key"], "JSON carries titles unchanged")

	cs, err := e.export(e.ctx, &findingsv1.ExportScanFindingsRequest{Id: e.scan.ID, Format: "csv", Severity: "critical"})
	require.NoError(t, err)
	require.Equal(t, "text/csv; charset=utf-8", cs.contentType)
	table, err := csv.NewReader(&cs.body).ReadAll()
	require.NoError(t, err)
	require.Len(t, table, 2, "header and the one critical finding")
	require.Equal(t, "id", table[0][0])
	require.Equal(t, e.ids[0], table[1][0])
	require.Equal(t, "12", table[1][7], "start_line")
	require.Equal(t, "14", table[1][8], "end_line")
	require.Equal(t, "cwe-89", table[1][11])

	formulas, err := e.export(e.ctx, &findingsv1.ExportScanFindingsRequest{Id: e.scan.ID, Format: "csv", Category: "secrets"})
	require.NoError(t, err)
	table, err = csv.NewReader(&formulas.body).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "'=Hard-coded key", table[1][1], "CSV neutralizes a formula")

	sr, err := e.export(e.ctx, &findingsv1.ExportScanFindingsRequest{Id: e.scan.ID, Format: "sarif"})
	require.NoError(t, err)
	require.Equal(t, "application/sarif+json", sr.contentType)
	var doc struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []map[string]any `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(sr.body.Bytes(), &doc))
	require.Equal(t, "2.1.0", doc.Version)
	require.Len(t, doc.Runs, 1)
	require.Len(t, doc.Runs[0].Results, 3)
}

func TestExportErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	foreign := principal.With(context.Background(), principal.Principal{OrgID: uuid.NewString(), UserID: uuid.NewString()})
	for name, tc := range map[string]struct {
		ctx  context.Context
		req  *findingsv1.ExportScanFindingsRequest
		code codes.Code
		msg  string
	}{
		"anonymous": {context.Background(), &findingsv1.ExportScanFindingsRequest{Id: e.scan.ID}, codes.Unauthenticated, "Missing API key"},
		"bad id":    {e.ctx, &findingsv1.ExportScanFindingsRequest{Id: "x"}, codes.InvalidArgument, "id must be a valid UUID"},
		"format":    {e.ctx, &findingsv1.ExportScanFindingsRequest{Id: e.scan.ID, Format: "xml"}, codes.InvalidArgument, "format must be one of: json, csv, sarif"},
		"severity": {e.ctx, &findingsv1.ExportScanFindingsRequest{Id: e.scan.ID, Severity: "worst"}, codes.InvalidArgument,
			"severity must be one of: critical, high, medium, low, info"},
		"unknown scan": {e.ctx, &findingsv1.ExportScanFindingsRequest{Id: uuid.NewString()}, codes.NotFound, "Scan not found"},
		"foreign scan": {foreign, &findingsv1.ExportScanFindingsRequest{Id: e.scan.ID}, codes.NotFound, "Scan not found"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := e.export(tc.ctx, tc.req)
			requireStatus(t, err, tc.code, tc.msg)
			require.Zero(t, s.body.Len(), "nothing is sent before the request is accepted")
			require.Nil(t, s.header)
		})
	}
}
