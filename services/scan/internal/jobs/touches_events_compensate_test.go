package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/vulnscan/vulnscan/pkg/engine"
	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle/lifecycletest"
	"github.com/vulnscan/vulnscan/services/scan/internal/prdiff"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// A pull request finding is kept when its lines or its dataflow path touch
// a changed line.
func TestTouches(t *testing.T) {
	t.Parallel()
	ch := prdiff.Changes{"app/views.py": {10: true}, "app/db.py": {3: true}}
	tests := []struct {
		name string
		f    engine.Finding
		want bool
	}{
		{"on a changed line", engine.Finding{AffectedFile: "app/views.py", StartLine: 10, EndLine: 10}, true},
		{"range spans a changed line", engine.Finding{AffectedFile: "app/views.py", StartLine: 8, EndLine: 12}, true},
		{"range beside the change", engine.Finding{AffectedFile: "app/views.py", StartLine: 11, EndLine: 20}, false},
		{"unchanged file", engine.Finding{AffectedFile: "app/other.py", StartLine: 10, EndLine: 10}, false},
		{"path through a changed line", engine.Finding{AffectedFile: "app/other.py", StartLine: 1, EndLine: 1,
			Path: []finding.Location{{File: "app/other.py", Line: 1}, {File: "app/db.py", Line: 3}}}, true},
		{"path beside the change", engine.Finding{AffectedFile: "app/other.py", StartLine: 1, EndLine: 1,
			Path: []finding.Location{{File: "app/db.py", Line: 4}, {File: "app/views.py", Line: 9}}}, false},
		{"live target", engine.Finding{AffectedFile: "https://example.test/login"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := touches(ch, tt.f); got != tt.want {
				t.Errorf("touches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEventData(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	completed := created.Add(time.Hour)
	msg := "The scan could not be completed"
	tests := []struct {
		name  string
		sc    store.Scan
		check map[string]any
	}{
		{
			name: "running scan",
			sc: store.Scan{ID: "s1", Status: vocab.ScanRunning, ScanType: "full", EstimationID: "e1", Credits: 7, CreatedAt: created,
				Repos: []store.Repo{{URL: "https://git.example/a", Branch: "main", Source: "git"}}, TargetURLs: []string{"https://t.example"},
				AuthInstructionsEnc: []byte("secret")},
			check: map[string]any{"id": "s1", "status": "running", "scan_type": "full", "cost_estimation_id": "e1",
				"credits_used": float64(7), "error": nil, "created_at": "2026-01-02T02:04:05Z", "started_at": nil, "completed_at": nil},
		},
		{
			name: "failed scan",
			sc:   store.Scan{ID: "s2", Status: vocab.ScanFailed, CreatedAt: created, StartedAt: &created, CompletedAt: &completed, Error: &msg},
			check: map[string]any{"status": "failed", "error": msg, "started_at": "2026-01-02T02:04:05Z",
				"completed_at": "2026-01-02T03:04:05Z", "credits_used": float64(0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := EventData(tt.sc)
			for k, want := range tt.check {
				if m[k] != want {
					t.Errorf("%s = %#v, want %#v", k, m[k], want)
				}
			}
			for k := range m {
				if k == "auth_instructions" || k == "auth_instructions_enc" {
					t.Errorf("event carries %s", k)
				}
			}
			repos, _ := m["repos"].([]any)
			if len(repos) != len(tt.sc.Repos) {
				t.Fatalf("repos = %v, want %d", m["repos"], len(tt.sc.Repos))
			}
			for i, r := range tt.sc.Repos {
				got := repos[i].(map[string]any)
				if got["url"] != r.URL || got["branch"] != r.Branch || got["source"] != r.Source {
					t.Errorf("repo %d = %v, want %+v", i, got, r)
				}
			}
			targets, _ := m["target_urls"].([]any)
			if len(targets) != len(tt.sc.TargetURLs) {
				t.Fatalf("target_urls = %v, want %v", m["target_urls"], tt.sc.TargetURLs)
			}
		})
	}
}

// charged returns a ledger of 10 credits debited for sc and the claims
// holding sc's estimation for it, as after a start.
func charged(t *testing.T, sc store.Scan) (*lifecycletest.Ledger, *lifecycletest.Claims) {
	t.Helper()
	ctx := context.Background()
	ledger, claims := lifecycletest.NewLedger(10), lifecycletest.NewClaims()
	if _, err := ledger.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: sc.OrgID, Amount: sc.Credits, Reference: lifecycle.CreditReference(sc.ID)}); err != nil {
		t.Fatal(err)
	}
	if _, err := claims.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: sc.OrgID, Id: sc.EstimationID, ScanId: sc.ID}); err != nil {
		t.Fatal(err)
	}
	return ledger, claims
}

// checkGivenBack checks that sc's credits and estimation, as charged left
// them, were given back exactly once (given) or not at all.
func checkGivenBack(t *testing.T, ledger *lifecycletest.Ledger, claims *lifecycletest.Claims, sc store.Scan, given bool) {
	t.Helper()
	balance, refunds := ledger.State()
	claimant := claims.Claimant(sc.EstimationID)
	if given {
		if balance != 10 || refunds != 1 || claimant != "" {
			t.Errorf("balance %d, refunds %d, claimant %q; want 10, 1 and released", balance, refunds, claimant)
		}
	} else if balance != 3 || refunds != 0 || claimant != sc.ID {
		t.Errorf("balance %d, refunds %d, claimant %q; want 3, 0 and still claimed", balance, refunds, claimant)
	}
}

// A recovery job undoes a start still unfinished: credits and estimation
// are given back and the scan is aborted; a started scan is left alone.
func TestRecoverStartWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, "scan_jobs")
	tests := []struct {
		name      string
		state     store.StartState
		wantState store.StartState
		wantGiven bool
	}{
		{name: "unfinished start", state: store.Starting, wantState: store.Aborted, wantGiven: true},
		{name: "started scan", state: store.Started, wantState: store.Started},
		{name: "already aborted", state: store.Aborted, wantState: store.Aborted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := storetest.Scan(uuid.NewString())
			storetest.Insert(t, st, sc, vocab.ScanPending, tt.state)
			ledger, claims := charged(t, sc)
			w := &RecoverStartWorker{Compensations: &lifecycle.Compensations{Store: st, Auth: ledger, Estimation: claims}}
			for range 2 { // a repeated job changes nothing more
				if err := w.Work(ctx, &river.Job[RecoverStart]{JobRow: &rivertype.JobRow{}, Args: RecoverStart{ScanID: sc.ID}}); err != nil {
					t.Fatalf("Work: %v", err)
				}
			}
			var state store.StartState
			if err := st.Pool.QueryRow(ctx, `SELECT start_state FROM scan.scans WHERE id = $1`, sc.ID).Scan(&state); err != nil {
				t.Fatal(err)
			}
			if state != tt.wantState {
				t.Errorf("start state = %s, want %s", state, tt.wantState)
			}
			checkGivenBack(t, ledger, claims, sc, tt.wantGiven)
		})
	}
}

// An undo job gives back a cancelled scan's credits and estimation, and is
// cancelled for a scan that is missing or not cancelled.
func TestUndoCancelledStartWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, "scan_jobs")
	tests := []struct {
		name       string
		status     vocab.ScanStatus // "" for a missing scan
		wantCancel bool
		wantGiven  bool
	}{
		{name: "missing scan", wantCancel: true},
		{name: "running scan", status: vocab.ScanRunning, wantCancel: true},
		{name: "completed scan", status: vocab.ScanCompleted, wantCancel: true},
		{name: "cancelled scan", status: vocab.ScanCancelled, wantGiven: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			org := uuid.NewString()
			sc := storetest.Scan(org)
			id := sc.ID
			if tt.status != "" {
				storetest.Insert(t, st, sc, tt.status, store.Started)
			}
			ledger, claims := charged(t, sc)
			w := &UndoCancelledStartWorker{Compensations: &lifecycle.Compensations{Store: st, Auth: ledger, Estimation: claims}}
			for range 2 { // a repeated job changes nothing more
				err := w.Work(ctx, &river.Job[UndoCancelledStart]{JobRow: &rivertype.JobRow{}, Args: UndoCancelledStart{ScanID: id}})
				var cancel *river.JobCancelError
				if tt.wantCancel != errors.As(err, &cancel) {
					t.Fatalf("Work error = %v, want cancel %v", err, tt.wantCancel)
				}
				if !tt.wantCancel && err != nil {
					t.Fatalf("Work: %v", err)
				}
			}
			checkGivenBack(t, ledger, claims, sc, tt.wantGiven)
		})
	}
}
