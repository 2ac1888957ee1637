package service_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/service"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
	"github.com/vulnscan/vulnscan/services/findings/internal/store/storetest"
)

// key names this package's template database.
const key = "findings_service"

// users stands in for the auth service's user lookups; it counts them.
type users struct {
	authv1.AuthInternalServiceClient
	mu    sync.Mutex
	calls int
	org   string // the one organization auth knows
}

func (u *users) GetOrganization(_ context.Context, in *authv1.GetOrganizationRequest, _ ...grpc.CallOption) (*authv1.GetOrganizationResponse, error) {
	if in.GetOrgId() != u.org {
		return nil, apierr.NotFound("Organization not found")
	}
	return &authv1.GetOrganizationResponse{Id: u.org, Name: "acme"}, nil
}

func (u *users) GetUser(_ context.Context, in *authv1.GetUserRequest, _ ...grpc.CallOption) (*authv1.GetUserResponse, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	return &authv1.GetUserResponse{Id: in.GetUserId(), OrgId: u.org, Username: "user-" + in.GetUserId()[:4]}, nil
}

// env is the public findings API (and the operators' admin API) over a store of its own, called by a user
// of org, with one registered scan holding three approved findings.
type env struct {
	pub   *service.Public
	admin *service.Admin
	box   *secretbox.Box
	st    *store.Store
	users *users
	org   string
	user  string
	ctx   context.Context
	scan  store.Scan
	ids   []string // critical injection, low xss, medium secrets
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := storetest.New(t, key)
	box, err := secretbox.New(bytes.Repeat([]byte{9}, 32))
	require.NoError(t, err)
	e := &env{st: st, org: uuid.NewString(), user: uuid.NewString(), box: box}
	e.users = &users{org: e.org}
	svc := &service.Service{Store: st, Auth: e.users, Box: box, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e.pub, e.admin = &service.Public{Service: svc}, &service.Admin{Service: svc}
	e.ctx = principal.With(context.Background(), principal.Principal{OrgID: e.org, UserID: e.user})
	e.scan = storetest.Scan(t, st, e.org, "https://github.com/acme/app")
	e.ids = storetest.Report(t, st, e.scan,
		store.Reported{Fingerprint: "fp-1", Title: "SQL injection in login", Category: "injection", Severity: "critical", Description: "d1",
			AffectedFile: "src/login.go", Tags: []string{"cwe-89"}, StartLine: 12, EndLine: 14},
		store.Reported{Fingerprint: "fp-2", Title: "Reflected XSS", Category: "xss", Severity: "low", Description: "d2", AffectedFile: "web/a.js"},
		store.Reported{Fingerprint: "fp-3", Title: "=Hard-coded key", Category: "secrets", Severity: "medium", Description: "d3", AffectedFile: "cfg/k.yml"},
	)
	return e
}

// requireStatus checks the gRPC code and message err carries to the gateway.
func requireStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	require.Equal(t, [2]any{code, msg}, [2]any{status.Code(err), status.Convert(err).Message()}, "%v", err)
}

func i32(v int32) *int32  { return &v }
func sp(v string) *string { return &v }
func ids(fs []*findingsv1.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.GetId()
	}
	return out
}

func TestListFindingsValidationNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for name, tc := range map[string]struct {
		req  *findingsv1.ListFindingsRequest
		code codes.Code
		msg  string
	}{
		"page":       {&findingsv1.ListFindingsRequest{Page: i32(0)}, codes.InvalidArgument, "page must be at least 1"},
		"limit":      {&findingsv1.ListFindingsRequest{Limit: i32(101)}, codes.InvalidArgument, "limit must be between 1 and 100"},
		"huge page":  {&findingsv1.ListFindingsRequest{Page: i32(1 << 30), Limit: i32(100)}, codes.InvalidArgument, "page is too large"},
		"severity":   {&findingsv1.ListFindingsRequest{Severity: "urgent"}, codes.InvalidArgument, "severity must be one of: critical, high, medium, low, info"},
		"state":      {&findingsv1.ListFindingsRequest{State: "closed"}, codes.InvalidArgument, "state must be one of: " + strings.Join(vocab.FindingStates.Strings(), ", ")},
		"sort_by":    {&findingsv1.ListFindingsRequest{SortBy: "title"}, codes.InvalidArgument, "sort_by must be one of: found_at, updated_at, severity"},
		"sort_order": {&findingsv1.ListFindingsRequest{SortOrder: "up"}, codes.InvalidArgument, "sort_order must be one of: ASC, DESC"},
		"scan_id":    {&findingsv1.ListFindingsRequest{ScanId: "s1"}, codes.InvalidArgument, "scan_id must be a valid UUID"},
		"category":   {&findingsv1.ListFindingsRequest{Category: "rce"}, codes.InvalidArgument, "category must be one of: " + strings.Join(vocab.Categories.Strings(), ", ")},
		"found_since": {&findingsv1.ListFindingsRequest{FoundSince: "yesterday"}, codes.InvalidArgument,
			"found_since must be an RFC 3339 time, for example 2026-01-31T00:00:00Z"},
		"unknown scan": {&findingsv1.ListFindingsRequest{ScanId: uuid.NewString()}, codes.NotFound, "Scan not found"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.pub.ListFindings(e.ctx, tc.req)
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
}

func TestListFindingsFiltersSortsAndPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	critical, low, medium := e.ids[0], e.ids[1], e.ids[2]
	for name, tc := range map[string]struct {
		req   *findingsv1.ListFindingsRequest
		want  []string
		total int32
	}{
		"by severity rank": {&findingsv1.ListFindingsRequest{SortBy: "severity"}, []string{critical, medium, low}, 3},
		"ascending rank":   {&findingsv1.ListFindingsRequest{SortBy: "severity", SortOrder: "asc"}, []string{low, medium, critical}, 3},
		"second page":      {&findingsv1.ListFindingsRequest{SortBy: "severity", Page: i32(2), Limit: i32(2)}, []string{low}, 3},
		"severity filter":  {&findingsv1.ListFindingsRequest{Severity: "medium"}, []string{medium}, 1},
		"category filter":  {&findingsv1.ListFindingsRequest{Category: "xss"}, []string{low}, 1},
		"file prefix":      {&findingsv1.ListFindingsRequest{AffectedFile: "src/"}, []string{critical}, 1},
		"text search":      {&findingsv1.ListFindingsRequest{Q: "sql INJECTION"}, []string{critical}, 1},
		"tag":              {&findingsv1.ListFindingsRequest{Tag: "cwe-89"}, []string{critical}, 1},
		"scan":             {&findingsv1.ListFindingsRequest{ScanId: e.scan.ID, SortBy: "severity"}, []string{critical, medium, low}, 3},
		"repo":             {&findingsv1.ListFindingsRequest{RepoUrl: "https://github.com/acme/other"}, []string{}, 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := e.pub.ListFindings(e.ctx, tc.req)
			require.NoError(t, err)
			require.Equal(t, tc.want, ids(got.GetData()))
			require.Equal(t, tc.total, got.GetTotal())
		})
	}
	got, err := e.pub.ListFindings(e.ctx, &findingsv1.ListFindingsRequest{})
	require.NoError(t, err)
	require.Equal(t, int32(1), got.GetPage())
	require.Equal(t, int32(service.DefaultLimit), got.GetLimit())

	scanList, err := e.pub.ListScanFindings(e.ctx, &findingsv1.ListScanFindingsRequest{Id: e.scan.ID, Severity: "critical"})
	require.NoError(t, err)
	require.Equal(t, []string{critical}, ids(scanList.GetData()))
	_, err = e.pub.ListScanFindings(e.ctx, &findingsv1.ListScanFindingsRequest{Id: "x"})
	requireStatus(t, err, codes.InvalidArgument, "id must be a valid UUID")
}

// TestForeignOrganizationSeesNothing: another organization's findings and
// scans are not found, never forbidden, and its lists are empty.
func TestForeignOrganizationSeesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := principal.With(context.Background(), principal.Principal{OrgID: uuid.NewString(), UserID: uuid.NewString()})
	id := e.ids[0]

	list, err := e.pub.ListFindings(ctx, &findingsv1.ListFindingsRequest{})
	require.NoError(t, err)
	require.Zero(t, list.GetTotal())
	_, err = e.pub.ListScanFindings(ctx, &findingsv1.ListScanFindingsRequest{Id: e.scan.ID})
	requireStatus(t, err, codes.NotFound, "Scan not found")
	_, err = e.pub.GetFinding(ctx, &findingsv1.GetFindingRequest{Id: id})
	requireStatus(t, err, codes.NotFound, "Finding not found")
	_, err = e.pub.UpdateFinding(ctx, &findingsv1.UpdateFindingRequest{Id: id, State: sp("resolved")})
	requireStatus(t, err, codes.NotFound, "Finding not found")
	_, err = e.pub.AddComment(ctx, &findingsv1.AddCommentRequest{Id: id, Comment: "mine now"})
	requireStatus(t, err, codes.NotFound, "Finding not found")
	_, err = e.pub.GetFindingHistory(ctx, &findingsv1.GetFindingHistoryRequest{Id: id})
	requireStatus(t, err, codes.NotFound, "Finding not found")
	_, err = e.pub.BulkUpdateFindings(ctx, &findingsv1.BulkUpdateFindingsRequest{Ids: []string{id}, State: sp("resolved")})
	requireStatus(t, err, codes.NotFound, "Finding not found: "+id)

	got, err := e.pub.GetFinding(e.ctx, &findingsv1.GetFindingRequest{Id: id})
	require.NoError(t, err)
	require.Equal(t, "open", got.GetState(), "the foreign calls changed nothing")
	require.Empty(t, got.GetTriageThread())
}

func TestGetFinding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	got, err := e.pub.GetFinding(e.ctx, &findingsv1.GetFindingRequest{Id: strings.ToUpper(e.ids[0])})
	require.NoError(t, err, "ids are UUIDs: their case does not matter")
	require.Equal(t, e.ids[0], got.GetId())
	require.Equal(t, "SQL injection in login", got.GetTitle())
	require.Equal(t, "critical", got.GetSeverity())
	require.Equal(t, "open", got.GetState())
	require.Equal(t, int32(12), got.GetLine().GetValue())
	require.Equal(t, e.scan.ID, got.GetScanId().GetValue())
	require.Equal(t, int32(1), got.GetOccurrenceCount())
	require.Equal(t, "fp-1", got.GetFingerprint())

	for name, tc := range map[string]struct {
		id   string
		code codes.Code
		msg  string
	}{
		"missing": {"", codes.InvalidArgument, "id is required"},
		"invalid": {"123", codes.InvalidArgument, "id must be a valid UUID"},
		"unknown": {uuid.NewString(), codes.NotFound, "Finding not found"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.pub.GetFinding(e.ctx, &findingsv1.GetFindingRequest{Id: tc.id})
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
}

func TestUpdateFindingValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.ids[0]
	for name, tc := range map[string]struct {
		req *findingsv1.UpdateFindingRequest
		msg string
	}{
		"nothing":         {&findingsv1.UpdateFindingRequest{Id: id, Reason: sp("why")}, "At least one of state, severity, duplicate_of must be given"},
		"bad id":          {&findingsv1.UpdateFindingRequest{Id: "x", State: sp("resolved")}, "id must be a valid UUID"},
		"state":           {&findingsv1.UpdateFindingRequest{Id: id, State: sp("done")}, "state must be one of: " + strings.Join(vocab.FindingStates.Strings(), ", ")},
		"severity":        {&findingsv1.UpdateFindingRequest{Id: id, Severity: sp("CRITICAL")}, "severity must be one of: critical, high, medium, low, info"},
		"duplicate bad":   {&findingsv1.UpdateFindingRequest{Id: id, DuplicateOf: structpb.NewStringValue("x")}, "duplicate_of must be a UUID or null"},
		"duplicate type":  {&findingsv1.UpdateFindingRequest{Id: id, DuplicateOf: structpb.NewNumberValue(3)}, "duplicate_of must be a UUID or null"},
		"duplicate state": {&findingsv1.UpdateFindingRequest{Id: id, State: sp("open"), DuplicateOf: structpb.NewStringValue(e.ids[1])}, "state must be resolved (or omitted) when duplicate_of is set"},
		"long reason":     {&findingsv1.UpdateFindingRequest{Id: id, State: sp("resolved"), Reason: sp(strings.Repeat("r", 2001))}, "reason must be at most 2000 characters"},
		"long state reason": {&findingsv1.UpdateFindingRequest{Id: id, State: sp("resolved"), StateReason: sp(strings.Repeat("r", 2001))},
			"state_reason must be at most 2000 characters"},
		"expiry without risk": {&findingsv1.UpdateFindingRequest{Id: id, State: sp("resolved"), ExpiresAt: sp("2099-01-01T00:00:00Z")}, "expires_at requires state accepted_risk"},
		"expiry format": {&findingsv1.UpdateFindingRequest{Id: id, State: sp("accepted_risk"), ExpiresAt: sp("2099-01-01")},
			"expires_at must be an RFC 3339 time, for example 2030-01-31T00:00:00Z"},
		"expiry past": {&findingsv1.UpdateFindingRequest{Id: id, State: sp("accepted_risk"), ExpiresAt: sp("2001-01-01T00:00:00Z")}, "expires_at must be in the future"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.pub.UpdateFinding(e.ctx, tc.req)
			requireStatus(t, err, codes.InvalidArgument, tc.msg)
		})
	}
	require.Zero(t, e.users.calls, "refused requests never look up the actor")
}

// TestTriageRoundTrip: a PATCH and a comment show in the finding's thread
// and its history with the actor's name from auth, looked up once.
func TestTriageRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.ids[0]
	up, err := e.pub.UpdateFinding(e.ctx, &findingsv1.UpdateFindingRequest{Id: id, State: sp("accepted_risk"), Severity: sp("high"),
		Reason: sp("behind the VPN"), ExpiresAt: sp("2099-01-01T00:00:00Z")})
	require.NoError(t, err)
	require.Equal(t, "accepted_risk", up.GetState())
	require.Equal(t, "high", up.GetSeverity())
	require.Nil(t, up.GetDuplicateOf())

	c, err := e.pub.AddComment(e.ctx, &findingsv1.AddCommentRequest{Id: id, Comment: "checked with ops"})
	require.NoError(t, err)
	require.NotEmpty(t, c.GetCommentId())

	got, err := e.pub.GetFinding(e.ctx, &findingsv1.GetFindingRequest{Id: id})
	require.NoError(t, err)
	require.Equal(t, "accepted_risk", got.GetState())
	require.Equal(t, 2099, got.GetRiskExpiresAt().AsTime().Year())
	var comments []string
	for _, entry := range got.GetTriageThread() {
		require.Equal(t, "user-"+e.user[:4], entry.GetUsername())
		if entry.GetComment() != nil {
			comments = append(comments, entry.GetComment().GetValue())
		}
	}
	require.Contains(t, comments, "checked with ops")

	hist, err := e.pub.GetFindingHistory(e.ctx, &findingsv1.GetFindingHistoryRequest{Id: id})
	require.NoError(t, err)
	fields := map[string][2]string{}
	for _, h := range hist.GetData() {
		fields[h.GetField()] = [2]string{h.GetFrom().GetValue(), h.GetTo().GetValue()}
		require.Equal(t, "user", h.GetActor().GetType())
		require.Equal(t, e.user, h.GetActor().GetUserId().GetValue())
		require.Equal(t, "user-"+e.user[:4], h.GetActor().GetUsername().GetValue())
	}
	require.Equal(t, [2]string{"open", "accepted_risk"}, fields["state"])
	require.Equal(t, [2]string{"critical", "high"}, fields["severity"])
	require.Equal(t, int32(len(hist.GetData())), hist.GetTotal())

	page, err := e.pub.GetFindingHistory(e.ctx, &findingsv1.GetFindingHistoryRequest{Id: id, Page: i32(2), Limit: i32(1)})
	require.NoError(t, err)
	require.Len(t, page.GetData(), 1)
	require.Equal(t, hist.GetData()[1].GetId(), page.GetData()[0].GetId())
	_, err = e.pub.GetFindingHistory(e.ctx, &findingsv1.GetFindingHistoryRequest{Id: id, Limit: i32(0)})
	requireStatus(t, err, codes.InvalidArgument, "limit must be between 1 and 100")

	e.users.mu.Lock()
	defer e.users.mu.Unlock()
	require.Equal(t, 1, e.users.calls, "usernames are cached")
}

func TestAddCommentValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for name, tc := range map[string]struct {
		id, comment string
		code        codes.Code
		msg         string
	}{
		"bad id":   {"x", "hi", codes.InvalidArgument, "id must be a valid UUID"},
		"blank":    {e.ids[0], "   ", codes.InvalidArgument, "comment must be 1 to 4000 characters"},
		"too long": {e.ids[0], strings.Repeat("é", 4001), codes.InvalidArgument, "comment must be at most 4000 characters"},
		"unknown":  {uuid.NewString(), "hi", codes.NotFound, "Finding not found"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.pub.AddComment(e.ctx, &findingsv1.AddCommentRequest{Id: tc.id, Comment: tc.comment})
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
}
