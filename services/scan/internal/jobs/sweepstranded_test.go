package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle/lifecycletest"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// The sweeper fails and refunds the idle started scans no job runs; when
// the refund cannot be made the scan stays unfinished for the next sweep.
func TestSweepStrandedWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name       string
		ledgerDown error
		wantStatus vocab.ScanStatus
		wantRefund bool
	}{
		{name: "refunded and failed", wantStatus: vocab.ScanFailed, wantRefund: true},
		{name: "ledger unavailable", ledgerDown: errors.New("auth unavailable"), wantStatus: vocab.ScanRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := storetest.New(t, "scan_jobs")
			org := uuid.NewString()
			ledger := lifecycletest.NewLedger(100)
			insert := func(idle bool) string {
				id := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanRunning, store.Started)
				if _, err := ledger.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: org, Amount: 7, Reference: lifecycle.CreditReference(id)}); err != nil {
					t.Fatal(err)
				}
				if idle {
					if _, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET updated_at = now() - interval '1 hour' WHERE id = $1`, id); err != nil {
						t.Fatal(err)
					}
				}
				return id
			}
			stranded, busy := insert(true), insert(false)
			ledger.Down = tt.ledgerDown
			w := &SweepStrandedWorker{Compensations: &lifecycle.Compensations{Store: st, Auth: ledger, Estimation: lifecycletest.NewClaims()},
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Idle: 10 * time.Minute}
			err := w.Work(ctx, &river.Job[SweepStranded]{JobRow: &rivertype.JobRow{}})
			if tt.ledgerDown != nil {
				if !errors.Is(err, tt.ledgerDown) {
					t.Fatalf("Work error = %v, want one wrapping %v", err, tt.ledgerDown)
				}
			} else if err != nil {
				t.Fatalf("Work: %v", err)
			}
			for id, want := range map[string]vocab.ScanStatus{stranded: tt.wantStatus, busy: vocab.ScanRunning} {
				status, err := st.Status(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if status != want {
					t.Errorf("scan %s status = %s, want %s", id, status, want)
				}
			}
			ledger.Down = nil
			balance, refunds := ledger.State()
			wantRefunds := 0
			if tt.wantRefund {
				wantRefunds = 1
			}
			if refunds != wantRefunds || balance != int32(86+7*wantRefunds) {
				t.Errorf("balance %d, refunds %d; want %d, %d", balance, refunds, 86+7*wantRefunds, wantRefunds)
			}
		})
	}
}
