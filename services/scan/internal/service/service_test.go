package service_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/jobs"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle/lifecycletest"
	"github.com/vulnscan/vulnscan/services/scan/internal/service"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// key names this package's template database.
const key = "scan_service"

// env is the scan service on a store of its own, with the estimation, auth
// and findings services faked, called as its caller (org, user) would.
type env struct {
	svc    *service.Service
	st     *store.Store
	est    *estimations
	ledger *lifecycletest.Ledger
	fnd    *findings
	org    string
	ctx    context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := storetest.New(t, key)
	rc, err := river.NewClient(riverpgxv5.New(st.Pool), &river.Config{Schema: store.Schema})
	require.NoError(t, err)
	guard, err := netguard.New(nil)
	require.NoError(t, err)
	box, err := secretbox.New(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	e := &env{st: st, est: newEstimations(), ledger: lifecycletest.NewLedger(100), fnd: &findings{}, org: uuid.NewString()}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.svc = &service.Service{Store: st, Findings: e.fnd, Log: log, Starter: &service.Starter{
		Pool: st.Pool, Store: st, Queue: &jobs.Queue{River: rc}, Estimation: e.est, Auth: e.ledger, Findings: e.fnd,
		Guard: guard, Box: box, Log: log,
	}}
	e.ctx = principal.With(context.Background(), principal.Principal{OrgID: e.org, UserID: uuid.NewString()})
	return e
}

// scan inserts a started scan of org in status and returns its id.
func (e *env) scan(t *testing.T, org string, st vocab.ScanStatus) string {
	t.Helper()
	return storetest.Insert(t, e.st, storetest.Scan(org), st, store.Started)
}

// requireStatus checks the gRPC code and message err carries to the gateway.
func requireStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	require.Equal(t, [2]any{code, msg}, [2]any{status.Code(err), status.Convert(err).Message()}, "%v", err)
}

func balance(l *lifecycletest.Ledger) int32 { b, _ := l.State(); return b }

func i32(v int32) *int32 { return &v }

func TestCallsWithoutPrincipalAreUnauthenticated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := uuid.NewString()
	calls := map[string]func() error{
		"CreateScan":    func() error { _, err := e.svc.CreateScan(ctx, &scanv1.CreateScanRequest{}); return err },
		"GetScanStatus": func() error { _, err := e.svc.GetScanStatus(ctx, &scanv1.GetScanStatusRequest{Id: id}); return err },
		"GetScan":       func() error { _, err := e.svc.GetScan(ctx, &scanv1.GetScanRequest{Id: id}); return err },
		"ListScans":     func() error { _, err := e.svc.ListScans(ctx, &scanv1.ListScansRequest{}); return err },
		"CancelScan":    func() error { _, err := e.svc.CancelScan(ctx, &scanv1.CancelScanRequest{Id: id}); return err },
		"CreateContextDocument": func() error {
			_, err := e.svc.CreateContextDocument(ctx, &scanv1.CreateContextDocumentRequest{})
			return err
		},
		"ListContextDocuments": func() error {
			_, err := e.svc.ListContextDocuments(ctx, &scanv1.ListContextDocumentsRequest{})
			return err
		},
		"GetContextDocument": func() error {
			_, err := e.svc.GetContextDocument(ctx, &scanv1.GetContextDocumentRequest{Id: id})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			requireStatus(t, call(), codes.Unauthenticated, "Missing API key")
		})
	}
}

func TestGetScanStatusAndDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.scan(t, e.org, vocab.ScanRunning)
	foreign := e.scan(t, uuid.NewString(), vocab.ScanRunning)

	st, err := e.svc.GetScanStatus(e.ctx, &scanv1.GetScanStatusRequest{Id: id})
	require.NoError(t, err)
	require.Equal(t, id, st.GetId())
	require.Equal(t, "running", st.GetStatus())
	require.NotNil(t, st.GetUpdatedAt())

	got, err := e.svc.GetScan(e.ctx, &scanv1.GetScanRequest{Id: id})
	require.NoError(t, err)
	sc := got.GetScan()
	require.Equal(t, id, sc.GetId())
	require.Equal(t, int32(7), sc.GetCreditsUsed())
	require.Equal(t, []string{}, sc.GetTargetUrls())
	require.Len(t, sc.GetRepos(), 1)
	require.Equal(t, "upload://x", sc.GetRepos()[0].GetUrl())
	require.Nil(t, sc.GetError(), "only a failed scan shows its error")
	require.Equal(t, int32(1), sc.GetFindingsSummary().GetCritical())
	require.Equal(t, int32(5), sc.GetFindingsSummary().GetInfo())
	require.Equal(t, int32(6), sc.GetVerification().GetCandidates(), "the details carry the verification summary")

	for name, tc := range map[string]struct {
		id   string
		code codes.Code
		msg  string
	}{
		"missing id":   {"", codes.InvalidArgument, "id is required"},
		"not a uuid":   {"abc", codes.InvalidArgument, "id must be a valid UUID"},
		"unknown scan": {uuid.NewString(), codes.NotFound, "Scan not found"},
		"foreign scan": {foreign, codes.NotFound, "Scan not found"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.svc.GetScanStatus(e.ctx, &scanv1.GetScanStatusRequest{Id: tc.id})
			requireStatus(t, err, tc.code, tc.msg)
			_, err = e.svc.GetScan(e.ctx, &scanv1.GetScanRequest{Id: tc.id})
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
}

func TestGetScanShowsFailedScansError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.scan(t, e.org, vocab.ScanRunning)
	failed, err := e.st.Fail(context.Background(), id, "The scan could not be completed")
	require.NoError(t, err)
	require.True(t, failed)
	got, err := e.svc.GetScan(e.ctx, &scanv1.GetScanRequest{Id: id})
	require.NoError(t, err)
	require.Equal(t, "failed", got.GetScan().GetStatus())
	require.Equal(t, "The scan could not be completed", got.GetScan().GetError().GetValue())
}

func TestListScansValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for name, tc := range map[string]struct {
		req *scanv1.ListScansRequest
		msg string
	}{
		"page zero":       {&scanv1.ListScansRequest{Page: i32(0)}, "page must be at least 1"},
		"limit zero":      {&scanv1.ListScansRequest{Limit: i32(0)}, "limit must be between 1 and 100"},
		"limit too large": {&scanv1.ListScansRequest{Limit: i32(101)}, "limit must be between 1 and 100"},
		"unknown status":  {&scanv1.ListScansRequest{Status: "done"}, "status must be one of: " + strings.Join(vocab.ScanStatuses.Strings(), ", ")},
		"unknown sort_by": {&scanv1.ListScansRequest{SortBy: "id"}, "sort_by must be one of: created_at, updated_at, status"},
		"lower sort":      {&scanv1.ListScansRequest{SortOrder: "asc"}, "sort_order must be one of: ASC, DESC"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.svc.ListScans(e.ctx, tc.req)
			requireStatus(t, err, codes.InvalidArgument, tc.msg)
		})
	}
}

func TestListScansPagesAndFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	running := map[string]bool{}
	for range 3 {
		running[e.scan(t, e.org, vocab.ScanRunning)] = true
	}
	completed := e.scan(t, e.org, vocab.ScanCompleted)
	e.scan(t, uuid.NewString(), vocab.ScanRunning)

	all, err := e.svc.ListScans(e.ctx, &scanv1.ListScansRequest{})
	require.NoError(t, err)
	require.Equal(t, int32(4), all.GetTotal(), "only the caller's scans")
	require.Equal(t, int32(1), all.GetPage())
	require.Equal(t, int32(vocab.DefaultPageLimit), all.GetLimit())
	require.Len(t, all.GetData(), 4)
	for _, sc := range all.GetData() {
		require.Equal(t, int32(2), sc.GetFindingsSummary().GetHigh())
		require.Nil(t, sc.GetVerification(), "lists carry no verification summary")
	}

	seen := map[string]bool{}
	for page := int32(1); page <= 3; page++ {
		got, err := e.svc.ListScans(e.ctx, &scanv1.ListScansRequest{Status: "running", Page: i32(page), Limit: i32(2), SortOrder: "ASC"})
		require.NoError(t, err)
		require.Equal(t, int32(3), got.GetTotal())
		want := map[int32]int{1: 2, 2: 1, 3: 0}[page]
		require.Len(t, got.GetData(), want, "page %d", page)
		for _, sc := range got.GetData() {
			require.True(t, running[sc.GetId()], "%s is a running scan", sc.GetId())
			require.False(t, seen[sc.GetId()], "%s on two pages", sc.GetId())
			seen[sc.GetId()] = true
		}
	}
	require.Len(t, seen, 3)

	done, err := e.svc.ListScans(e.ctx, &scanv1.ListScansRequest{Status: "completed", SortBy: "status"})
	require.NoError(t, err)
	require.Len(t, done.GetData(), 1)
	require.Equal(t, completed, done.GetData()[0].GetId())
}
