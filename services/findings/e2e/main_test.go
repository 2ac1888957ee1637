// Package e2e tests the findings service end to end: findings enter through
// the gRPC intake (as the scan service sends them) and are read, triaged
// and exported through the real gateway.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/systest"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

var (
	sys    *systest.System
	intake findingsv1.FindingsIntakeServiceClient
	pool   *pgxpool.Pool
)

func TestMain(m *testing.M) {
	os.Exit(systest.Run(m, systest.Options{Env: map[string]string{
		"VULNSCAN_RATE_LIMIT":            "2000:4000",
		"FINDINGS_DELIVERY_POLL":         "100ms",
		"FINDINGS_DELIVERY_BACKOFF":      "200ms",
		"FINDINGS_DELIVERY_MAX_BACKOFF":  "400ms",
		"FINDINGS_DELIVERY_MAX_ATTEMPTS": "4",
		"FINDINGS_WEBHOOK_POLL":          "100ms",
		"FINDINGS_WEBHOOK_BACKOFF":       "200ms",
		"FINDINGS_WEBHOOK_MAX_BACKOFF":   "400ms",
		"FINDINGS_WEBHOOK_MAX_ATTEMPTS":  "4",
		"FINDINGS_MAX_WEBHOOKS":          "3",
	}}, &sys))
}

var setupOnce sync.Once

// connect opens the intake client and a database pool once per test binary.
func connect(t *testing.T) {
	t.Helper()
	var err error
	setupOnce.Do(func() {
		var cc, admin *grpc.ClientConn
		if cc, err = sys.Dial("findings", mtls.Scan, false); err != nil {
			return
		}
		if admin, err = sys.Dial("findings", mtls.Operator, true); err != nil {
			return
		}
		intake = routedIntake{FindingsIntakeServiceClient: findingsv1.NewFindingsIntakeServiceClient(cc),
			operator: findingsv1.NewFindingsIntakeServiceClient(admin)}
		pool, err = pgxpool.New(context.Background(), sys.DatabaseURL)
	})
	require.NoError(t, err)
	require.NotNil(t, intake)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func newOrg(t *testing.T, mode string) systest.Org {
	t.Helper()
	connect(t)
	o, err := sys.NewOrg(0, mode)
	require.NoError(t, err)
	return o
}

// newScan registers a scan of repo for org.
func newScan(t *testing.T, org systest.Org, repo string) string {
	t.Helper()
	id := uuid.NewString()
	_, err := intake.RegisterScan(ctx(t), &findingsv1.RegisterScanRequest{ScanId: id, OrgId: org.ID, RepoUrl: repo, ScanType: "full"})
	require.NoError(t, err)
	return id
}

// fnd builds a reported finding; verified unless told otherwise.
func fnd(fp, severity string) *findingsv1.ReportedFinding {
	return &findingsv1.ReportedFinding{Fingerprint: fp, Title: "Finding " + fp, Category: "injection", Severity: severity,
		Description: "desc " + fp, AffectedFile: "src/" + fp + ".go", AffectedCode: "db.Query(\"...\" + x)", Tags: []string{"t1", "t2"},
		StartLine: 10, EndLine: 12, Verified: true, MermaidTrace: wrapperspb.String("graph TD; A-->B")}
}

// report sends findings for scan and returns their ids in order.
func report(t *testing.T, scan string, fs ...*findingsv1.ReportedFinding) []string {
	t.Helper()
	r, err := intake.ReportFindings(ctx(t), &findingsv1.ReportFindingsRequest{ScanId: scan, Findings: fs})
	require.NoError(t, err)
	ids := make([]string, 0, len(fs))
	for _, x := range r.GetResults() {
		ids = append(ids, x.GetFindingId())
	}
	return ids
}

func do(t *testing.T, method, path, key string, body any) systest.Response {
	t.Helper()
	r, err := sys.Do(method, path, key, body)
	require.NoError(t, err)
	return r
}

// requireError checks the spec's error body.
func requireError(t *testing.T, r systest.Response, status int, msgContains string) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	m := r.JSON()
	require.NotNil(t, m, "error body is not JSON: %s", r.Body)
	require.EqualValues(t, status, m["statusCode"])
	require.NotEmpty(t, m["error"])
	require.Contains(t, fmt.Sprint(m["message"]), msgContains)
}

// listResp is a decoded list answer.
type listResp struct {
	Data  []map[string]any `json:"data"`
	Total int              `json:"total"`
	Page  int              `json:"page"`
	Limit int              `json:"limit"`
}

func list(t *testing.T, key, path string) listResp {
	t.Helper()
	r := do(t, "GET", path, key, nil)
	require.Equal(t, 200, r.Status, "GET %s: %s", path, r.Body)
	var l listResp
	require.NoError(t, json.Unmarshal(r.Body, &l))
	return l
}

func ids(l listResp) []string {
	out := make([]string, 0, len(l.Data))
	for _, d := range l.Data {
		out = append(out, d["id"].(string))
	}
	return out
}

// routedIntake calls the intake methods as their real callers do: reports and
// summaries as the scan service on the main listener, approvals and operator
// listings as vulnscanctl on the admin listener.
type routedIntake struct {
	findingsv1.FindingsIntakeServiceClient
	operator findingsv1.FindingsIntakeServiceClient
}

func (r routedIntake) ApproveFinding(ctx context.Context, in *findingsv1.ApproveFindingRequest, opts ...grpc.CallOption) (*findingsv1.ApproveFindingResponse, error) {
	return r.operator.ApproveFinding(ctx, in, opts...)
}

func (r routedIntake) RejectFinding(ctx context.Context, in *findingsv1.RejectFindingRequest, opts ...grpc.CallOption) (*findingsv1.RejectFindingResponse, error) {
	return r.operator.RejectFinding(ctx, in, opts...)
}

func (r routedIntake) ListFindingsForOperator(ctx context.Context, in *findingsv1.ListFindingsForOperatorRequest, opts ...grpc.CallOption) (*findingsv1.ListFindingsForOperatorResponse, error) {
	return r.operator.ListFindingsForOperator(ctx, in, opts...)
}
