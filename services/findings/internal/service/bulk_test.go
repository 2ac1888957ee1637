package service_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

func TestBulkUpdateValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tooMany := make([]string, store.MaxBulk+1)
	for i := range tooMany {
		tooMany[i] = uuid.NewString()
	}
	for name, tc := range map[string]struct {
		req  *findingsv1.BulkUpdateFindingsRequest
		code codes.Code
		msg  string
	}{
		"neither": {&findingsv1.BulkUpdateFindingsRequest{State: sp("resolved")}, codes.InvalidArgument, "ids (1 to 1000 finding ids) or filter is required"},
		"both": {&findingsv1.BulkUpdateFindingsRequest{Ids: e.ids, Filter: &findingsv1.FindingsFilter{}, State: sp("resolved")}, codes.InvalidArgument,
			"Give either ids or filter, not both"},
		"too many": {&findingsv1.BulkUpdateFindingsRequest{Ids: tooMany, State: sp("resolved")}, codes.InvalidArgument, "ids must have at most 1000 entries"},
		"bad id":   {&findingsv1.BulkUpdateFindingsRequest{Ids: []string{e.ids[0], "x"}, State: sp("resolved")}, codes.InvalidArgument, "ids[1] must be a valid UUID"},
		"repeat": {&findingsv1.BulkUpdateFindingsRequest{Ids: []string{e.ids[0], e.ids[1], strings.ToUpper(e.ids[0])}, State: sp("resolved")}, codes.InvalidArgument,
			"ids[2] repeats ids[0]"},
		"no change": {&findingsv1.BulkUpdateFindingsRequest{Ids: e.ids}, codes.InvalidArgument, "At least one of state, severity, duplicate_of must be given"},
		"filter severity": {&findingsv1.BulkUpdateFindingsRequest{Filter: &findingsv1.FindingsFilter{Severity: "bad"}, State: sp("resolved")}, codes.InvalidArgument,
			"filter.severity must be one of: critical, high, medium, low, info"},
		"filter state": {&findingsv1.BulkUpdateFindingsRequest{Filter: &findingsv1.FindingsFilter{State: "bad"}, State: sp("resolved")}, codes.InvalidArgument,
			"filter.state must be one of: open, true_positive, false_positive, accepted_risk, resolved"},
		"filter scan": {&findingsv1.BulkUpdateFindingsRequest{Filter: &findingsv1.FindingsFilter{ScanId: "s"}, State: sp("resolved")}, codes.InvalidArgument,
			"filter.scan_id must be a valid UUID"},
		"filter q": {&findingsv1.BulkUpdateFindingsRequest{Filter: &findingsv1.FindingsFilter{Q: " "}, State: sp("resolved")}, codes.InvalidArgument,
			"filter.q must not be only spaces"},
		"filter unknown scan": {&findingsv1.BulkUpdateFindingsRequest{Filter: &findingsv1.FindingsFilter{ScanId: uuid.NewString()}, State: sp("resolved")}, codes.NotFound,
			"Scan not found"},
		"unknown id": {&findingsv1.BulkUpdateFindingsRequest{Ids: []string{e.ids[0], "00000000-0000-4000-8000-000000000000"}, State: sp("resolved")}, codes.NotFound,
			"Finding not found: 00000000-0000-4000-8000-000000000000"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.pub.BulkUpdateFindings(e.ctx, tc.req)
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
	// All or nothing: the known id of the refused request is unchanged.
	got, err := e.pub.GetFinding(e.ctx, &findingsv1.GetFindingRequest{Id: e.ids[0]})
	require.NoError(t, err)
	require.Equal(t, "open", got.GetState())
}

func TestBulkUpdateByIdsAndFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	critical, low, medium := e.ids[0], e.ids[1], e.ids[2]

	byIDs, err := e.pub.BulkUpdateFindings(e.ctx, &findingsv1.BulkUpdateFindingsRequest{Ids: []string{critical, low}, State: sp("false_positive"), Reason: sp("test code")})
	require.NoError(t, err)
	require.Equal(t, int32(2), byIDs.GetMatched())
	require.Equal(t, int32(2), byIDs.GetChanged())
	require.Zero(t, byIDs.GetUnchanged())
	require.NoError(t, uuid.Validate(byIDs.GetBatchId()))

	again, err := e.pub.BulkUpdateFindings(e.ctx, &findingsv1.BulkUpdateFindingsRequest{Ids: []string{critical, low}, State: sp("false_positive")})
	require.NoError(t, err)
	require.Equal(t, int32(2), again.GetMatched())
	require.Zero(t, again.GetChanged())
	require.Equal(t, int32(2), again.GetUnchanged())

	byFilter, err := e.pub.BulkUpdateFindings(e.ctx, &findingsv1.BulkUpdateFindingsRequest{
		Filter: &findingsv1.FindingsFilter{ScanId: e.scan.ID, State: "open"}, Severity: sp("info")})
	require.NoError(t, err)
	require.Equal(t, int32(1), byFilter.GetMatched(), "only the medium finding is still open")
	require.Equal(t, int32(1), byFilter.GetChanged())

	want := map[string][2]string{critical: {"false_positive", "critical"}, low: {"false_positive", "low"}, medium: {"open", "info"}}
	for id, w := range want {
		got, err := e.pub.GetFinding(e.ctx, &findingsv1.GetFindingRequest{Id: id})
		require.NoError(t, err)
		require.Equal(t, w, [2]string{got.GetState(), got.GetSeverity()}, id)
	}

	hist, err := e.pub.GetFindingHistory(e.ctx, &findingsv1.GetFindingHistoryRequest{Id: critical})
	require.NoError(t, err)
	require.Equal(t, int32(1), hist.GetTotal(), "the unchanged second run left no record")
	require.Equal(t, byIDs.GetBatchId(), hist.GetData()[0].GetBatchId().GetValue())
	require.Equal(t, "test code", hist.GetData()[0].GetReason().GetValue())
}
