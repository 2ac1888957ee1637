package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/pkg/engine"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle/lifecycletest"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// intake stands in for the findings service: registration runs onRegister,
// and reported batches are recorded.
type intake struct {
	findingsv1.FindingsIntakeServiceClient
	onRegister func(scanID string) error
	reportErr  error
	mu         sync.Mutex
	batches    []*findingsv1.ReportFindingsRequest
}

func (f *intake) RegisterScan(_ context.Context, in *findingsv1.RegisterScanRequest, _ ...grpc.CallOption) (*findingsv1.RegisterScanResponse, error) {
	if err := f.onRegister(in.GetScanId()); err != nil {
		return nil, err
	}
	return &findingsv1.RegisterScanResponse{}, nil
}

func (f *intake) ReportFindings(_ context.Context, in *findingsv1.ReportFindingsRequest, _ ...grpc.CallOption) (*findingsv1.ReportFindingsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reportErr != nil {
		return nil, f.reportErr
	}
	f.batches = append(f.batches, in)
	return &findingsv1.ReportFindingsResponse{}, nil
}

var errFindingsDown = errors.New("findings unavailable")

// A failed attempt is retried while attempts remain; the last one fails the
// scan and refunds its credits; a scan cancelled while its attempt fails
// stays cancelled and keeps its credits.
func TestRunScanFailedAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, "scan_jobs")
	tests := []struct {
		name         string
		attempt, max int
		cancelDuring bool
		wantErr      bool
		wantStatus   vocab.ScanStatus
		wantRefunds  int
	}{
		{name: "first of three attempts is retried", attempt: 1, max: 3, wantErr: true, wantStatus: vocab.ScanRunning},
		{name: "last attempt fails and refunds", attempt: 3, max: 3, wantStatus: vocab.ScanFailed, wantRefunds: 1},
		{name: "past the last attempt fails and refunds", attempt: 4, max: 3, wantStatus: vocab.ScanFailed, wantRefunds: 1},
		{name: "cancelled while failing keeps its credits", attempt: 3, max: 3, cancelDuring: true, wantStatus: vocab.ScanCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			org := uuid.NewString()
			id := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanPending, store.Started)
			ledger := lifecycletest.NewLedger(10)
			if _, err := ledger.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: org, Amount: 7, Reference: lifecycle.CreditReference(id)}); err != nil {
				t.Fatal(err)
			}
			fi := &intake{onRegister: func(scanID string) error {
				if tt.cancelDuring {
					if _, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET status = $2 WHERE id = $1`, scanID, vocab.ScanCancelled); err != nil {
						return err
					}
				}
				return errFindingsDown
			}}
			w := &RunScanWorker{Store: st, Auth: ledger, Estimation: lifecycletest.NewClaims(), Findings: fi,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), WorkDir: t.TempDir(), CancelPoll: time.Hour}
			err := w.Work(ctx, &river.Job[RunScan]{JobRow: &rivertype.JobRow{Attempt: tt.attempt, MaxAttempts: tt.max}, Args: RunScan{ScanID: id}})
			if tt.wantErr {
				if !errors.Is(err, errFindingsDown) {
					t.Fatalf("Work error = %v, want one wrapping %v", err, errFindingsDown)
				}
			} else if err != nil {
				t.Fatalf("Work: %v", err)
			}
			sc, err := st.ByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Status != tt.wantStatus {
				t.Errorf("status = %s, want %s", sc.Status, tt.wantStatus)
			}
			if tt.wantStatus == vocab.ScanFailed && (sc.Error == nil || *sc.Error != lifecycle.FailedMessage) {
				t.Errorf("error = %v, want %q", sc.Error, lifecycle.FailedMessage)
			}
			balance, refunds := ledger.State()
			if refunds != tt.wantRefunds {
				t.Errorf("refunds = %d, want %d", refunds, tt.wantRefunds)
			}
			if want := int32(3 + 7*tt.wantRefunds); balance != want {
				t.Errorf("balance = %d, want %d", balance, want)
			}
		})
	}
}

// Findings are reported in batches of ReportBatch, in order, each carrying
// the scan id; a failed call stops the reporting with its error.
func TestReportBatches(t *testing.T) {
	t.Parallel()
	findings := func(n int) []engine.Finding {
		out := make([]engine.Finding, n)
		for i := range out {
			out[i] = engine.Finding{Fingerprint: uuid.NewString(), Title: "t", StartLine: i + 1, EndLine: i + 1}
		}
		return out
	}
	tests := []struct {
		name      string
		n         int
		reportErr error
		want      []int
	}{
		{name: "none", n: 0, want: nil},
		{name: "one", n: 1, want: []int{1}},
		{name: "exactly one batch", n: ReportBatch, want: []int{ReportBatch}},
		{name: "one over a batch", n: ReportBatch + 1, want: []int{ReportBatch, 1}},
		{name: "several batches", n: 2*ReportBatch + 37, want: []int{ReportBatch, ReportBatch, 37}},
		{name: "findings unavailable", n: 3, reportErr: errFindingsDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fi := &intake{reportErr: tt.reportErr}
			w := &RunScanWorker{Findings: fi}
			sc := store.Scan{ID: uuid.NewString()}
			fs := findings(tt.n)
			err := w.report(context.Background(), sc, fs)
			if tt.reportErr != nil {
				if !errors.Is(err, tt.reportErr) {
					t.Fatalf("report error = %v, want one wrapping %v", err, tt.reportErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("report: %v", err)
			}
			if len(fi.batches) != len(tt.want) {
				t.Fatalf("%d batches, want %d", len(fi.batches), len(tt.want))
			}
			next := 0
			for i, b := range fi.batches {
				if b.GetScanId() != sc.ID {
					t.Errorf("batch %d scan id = %q, want %q", i, b.GetScanId(), sc.ID)
				}
				if len(b.GetFindings()) != tt.want[i] {
					t.Errorf("batch %d has %d findings, want %d", i, len(b.GetFindings()), tt.want[i])
				}
				for _, rf := range b.GetFindings() {
					if rf.GetFingerprint() != fs[next].Fingerprint || int(rf.GetStartLine()) != fs[next].StartLine {
						t.Fatalf("finding %d reported as %s line %d, want %s line %d", next, rf.GetFingerprint(), rf.GetStartLine(), fs[next].Fingerprint, fs[next].StartLine)
					}
					next++
				}
			}
			if next != tt.n {
				t.Errorf("reported %d findings, want %d", next, tt.n)
			}
		})
	}
}

// The run context of a scan ends with cause errCancelled once the scan is
// cancelled, and ends without that cause when the run stops the watch.
func TestWatchCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, "scan_jobs")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name      string
		cancel    bool
		wantCause error
	}{
		{name: "cancelled through the API", cancel: true, wantCause: errCancelled},
		{name: "stopped by the run", cancel: false, wantCause: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := storetest.Insert(t, st, storetest.Scan(uuid.NewString()), vocab.ScanRunning, store.Started)
			w := &RunScanWorker{Store: st, CancelPoll: time.Millisecond}
			runCtx, stop := w.watchCancel(ctx, log, id)
			if tt.cancel {
				if _, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET status = $2 WHERE id = $1`, id, vocab.ScanCancelled); err != nil {
					t.Fatal(err)
				}
				<-runCtx.Done()
				stop()
			} else {
				if runCtx.Err() != nil {
					t.Fatalf("run context ended before the scan was cancelled: %v", context.Cause(runCtx))
				}
				stop()
			}
			if cause := context.Cause(runCtx); !errors.Is(cause, tt.wantCause) {
				t.Fatalf("cause = %v, want %v", cause, tt.wantCause)
			}
			if !tt.cancel && errors.Is(context.Cause(runCtx), errCancelled) {
				t.Fatal("a stopped watch reports a cancellation")
			}
		})
	}
}
