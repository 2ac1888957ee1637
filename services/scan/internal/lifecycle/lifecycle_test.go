package lifecycle_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/jobs"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle/lifecycletest"
	"github.com/vulnscan/vulnscan/services/scan/internal/service"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// key names this package's template database.
const key = "scan_lifecycle"

// TestCreditReference pins the reference under which auth holds a scan's
// debit: debits already recorded are refunded under it, so it never changes.
func TestCreditReference(t *testing.T) {
	t.Parallel()
	require.Equal(t, "scan:0b1c", lifecycle.CreditReference("0b1c"))
}

// env is a scan store on its own database with the other services' credit
// and claim calls faked, and the compensations over them.
type env struct {
	st     *store.Store
	ledger *lifecycletest.Ledger
	claims *lifecycletest.Claims
	comp   *lifecycle.Compensations
	org    string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{st: storetest.New(t, key), ledger: lifecycletest.NewLedger(50), claims: lifecycletest.NewClaims(), org: uuid.NewString()}
	e.comp = &lifecycle.Compensations{Store: e.st, Auth: e.ledger, Estimation: e.claims}
	return e
}

// taken records a scan in state and status that has claimed its estimation
// and had its 7 credits debited, as the saga's steps 2 and 3 leave it.
func (e *env) taken(t *testing.T, status vocab.ScanStatus, state store.StartState) store.Scan {
	t.Helper()
	sc := storetest.Scan(e.org)
	storetest.Insert(t, e.st, sc, status, state)
	ctx := context.Background()
	_, err := e.claims.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: sc.OrgID, Id: sc.EstimationID, ScanId: sc.ID})
	require.NoError(t, err)
	_, err = e.ledger.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: sc.OrgID, Amount: sc.Credits, Reference: lifecycle.CreditReference(sc.ID)})
	require.NoError(t, err)
	return sc
}

// TestAbortStart: undoing an unfinished start gives the credits and the
// claim back exactly once however often it runs, also when the request
// and the recovery job run it at the same time; a started scan is left
// alone.
func TestAbortStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	sc := e.taken(t, vocab.ScanPending, store.Starting)
	bal, _ := e.ledger.State()
	require.Equal(t, int32(43), bal)

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- e.comp.AbortStart(ctx, sc.ID) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, e.comp.AbortStart(ctx, sc.ID))
	bal, refunds := e.ledger.State()
	require.Equal(t, int32(50), bal, "the credits are back")
	require.Equal(t, 1, refunds, "and only once")
	require.Empty(t, e.claims.Claimant(sc.EstimationID), "the estimation is claimable again")
	row, err := e.st.ByID(ctx, sc.ID)
	require.NoError(t, err)
	require.Equal(t, store.Aborted, row.StartState)

	started := e.taken(t, vocab.ScanPending, store.Started)
	require.NoError(t, e.comp.AbortStart(ctx, started.ID))
	bal, refunds = e.ledger.State()
	require.Equal(t, int32(43), bal, "a started scan keeps its credits")
	require.Equal(t, 1, refunds)
	require.Equal(t, started.ID, e.claims.Claimant(started.EstimationID))
}

// TestAbortStartRetried: when auth or estimation cannot be reached the scan
// stays aborting, so the recovery job's retry finishes the undo.
func TestAbortStartRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, down := range []string{"auth", "estimation"} {
		t.Run(down, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			sc := e.taken(t, vocab.ScanPending, store.Starting)
			unavailable := errors.New(down + " unavailable")
			if down == "auth" {
				e.ledger.Down = unavailable
			} else {
				e.claims.Down = unavailable
			}
			require.ErrorIs(t, e.comp.AbortStart(ctx, sc.ID), unavailable)
			row, err := e.st.ByID(ctx, sc.ID)
			require.NoError(t, err)
			require.Equal(t, store.Aborting, row.StartState)

			e.ledger.Down, e.claims.Down = nil, nil
			worker := &jobs.RecoverStartWorker{Compensations: e.comp}
			require.NoError(t, worker.Work(ctx, &river.Job[jobs.RecoverStart]{Args: jobs.RecoverStart{ScanID: sc.ID}}))
			row, err = e.st.ByID(ctx, sc.ID)
			require.NoError(t, err)
			require.Equal(t, store.Aborted, row.StartState)
			bal, refunds := e.ledger.State()
			require.Equal(t, int32(50), bal)
			require.Equal(t, 1, refunds)
			require.Empty(t, e.claims.Claimant(sc.EstimationID))
		})
	}
}

// TestFailAndRefund: a started scan that cannot finish is refunded once
// and failed with its message, however often it runs; its estimation stays
// claimed. If the refund cannot be made the scan stays unfinished, so a
// retry or the sweeper does both later.
func TestFailAndRefund(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	sc := e.taken(t, vocab.ScanRunning, store.Started)

	e.ledger.Down = errors.New("auth unavailable")
	require.Error(t, e.comp.FailAndRefund(ctx, sc, lifecycle.FailedMessage))
	status, err := e.st.Status(ctx, sc.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanRunning, status, "not failed before it is refunded")

	e.ledger.Down = nil
	for range 3 {
		require.NoError(t, e.comp.FailAndRefund(ctx, sc, lifecycle.FailedMessage))
	}
	row, err := e.st.ByID(ctx, sc.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanFailed, row.Status)
	require.Equal(t, lifecycle.FailedMessage, *row.Error)
	bal, refunds := e.ledger.State()
	require.Equal(t, int32(50), bal)
	require.Equal(t, 1, refunds)
	require.Equal(t, sc.ID, e.claims.Claimant(sc.EstimationID), "a scan that ran keeps its estimation")
}

// TestSweepStranded: the sweeper fails and refunds a started scan whose run
// job is gone, through the same compensation.
func TestSweepStranded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	sc := e.taken(t, vocab.ScanRunning, store.Started)
	_, err := e.st.Pool.Exec(ctx, `UPDATE scan.scans SET updated_at = now() - interval '1 hour' WHERE id = $1`, sc.ID)
	require.NoError(t, err)
	sweeper := &jobs.SweepStrandedWorker{Compensations: e.comp, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Idle: time.Minute}
	require.NoError(t, sweeper.Work(ctx, &river.Job[jobs.SweepStranded]{}))
	require.NoError(t, sweeper.Work(ctx, &river.Job[jobs.SweepStranded]{}))
	status, err := e.st.Status(ctx, sc.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanFailed, status)
	bal, refunds := e.ledger.State()
	require.Equal(t, int32(50), bal)
	require.Equal(t, 1, refunds)
}

// TestUndoCancelledStart: the job for a scan cancelled while pending gives
// its credits and claim back once; for a scan that is not cancelled it does
// nothing.
func TestUndoCancelledStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	worker := &jobs.UndoCancelledStartWorker{Compensations: e.comp}
	run := func(id string) error {
		return worker.Work(ctx, &river.Job[jobs.UndoCancelledStart]{Args: jobs.UndoCancelledStart{ScanID: id}})
	}
	cancelled := e.taken(t, vocab.ScanCancelled, store.Started)
	require.NoError(t, run(cancelled.ID))
	require.NoError(t, run(cancelled.ID))
	bal, refunds := e.ledger.State()
	require.Equal(t, int32(50), bal)
	require.Equal(t, 1, refunds)
	require.Empty(t, e.claims.Claimant(cancelled.EstimationID))

	running := e.taken(t, vocab.ScanRunning, store.Started)
	var cancel *river.JobCancelError
	require.ErrorAs(t, run(running.ID), &cancel)
	require.ErrorAs(t, run(uuid.NewString()), &cancel)
	bal, _ = e.ledger.State()
	require.Equal(t, int32(43), bal, "a running scan keeps its credits")
}

// saga is the API's start saga over the env, queueing on a real River
// client on the same database.
func (e *env) saga(t *testing.T) (*service.Starter, *lifecycletest.Registry) {
	t.Helper()
	rc, err := river.NewClient(riverpgxv5.New(e.st.Pool), &river.Config{Schema: store.Schema})
	require.NoError(t, err)
	reg := &lifecycletest.Registry{}
	return &service.Starter{Pool: e.st.Pool, Store: e.st, Queue: &jobs.Queue{River: rc}, Estimation: e.claims, Auth: e.ledger, Findings: reg,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), RecoveryDelay: time.Hour}, reg
}

func (e *env) request() *service.Start {
	return &service.Start{
		Caller:     principal.Principal{OrgID: e.org, UserID: uuid.NewString()},
		Req:        &scanv1.CreateScanRequest{},
		Repos:      []store.Repo{{URL: "upload://" + uuid.NewString(), Source: "upload"}},
		Estimation: &estimationv1.CostEstimation{Id: uuid.NewString(), TotalCredits: 7},
	}
}

// jobsOf returns the kinds and schedule of the River jobs queued for a scan.
func (e *env) jobsOf(t *testing.T, scanID string) map[string]time.Time {
	t.Helper()
	rows, err := e.st.Pool.Query(context.Background(), `SELECT kind, scheduled_at FROM scan.river_job WHERE args->>'scan_id' = $1`, scanID)
	require.NoError(t, err)
	out := map[string]time.Time{}
	for rows.Next() {
		var kind string
		var at time.Time
		require.NoError(t, rows.Scan(&kind, &at))
		out[kind] = at
	}
	require.NoError(t, rows.Err())
	return out
}

// TestStartSaga: a start that succeeds debits under the scan's credit
// reference and queues the scan; a start that fails after any step gives
// back exactly what it took, under the same reference, and leaves no
// visible scan.
func TestStartSaga(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("success", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		starter, reg := e.saga(t)
		in := e.request()
		sc, err := starter.Start(ctx, in)
		require.NoError(t, err)
		require.Equal(t, map[string]int32{lifecycle.CreditReference(sc.ID): 7}, e.ledger.Debits, "debited once under the scan's reference")
		require.Equal(t, sc.ID, e.claims.Claimant(in.Estimation.GetId()))
		row, err := e.st.Get(ctx, e.org, sc.ID)
		require.NoError(t, err)
		require.Equal(t, store.Started, row.StartState)
		require.Equal(t, vocab.ScanPending, row.Status)
		queued := e.jobsOf(t, sc.ID)
		require.Contains(t, queued, jobs.RunScan{}.Kind())
		require.Contains(t, queued, jobs.RecoverStart{}.Kind())
		require.WithinDuration(t, time.Now().Add(time.Hour), queued[jobs.RecoverStart{}.Kind()], 10*time.Minute, "recovery waits for RecoveryDelay")
		require.Equal(t, []string{sc.ID}, reg.ScanIDs())
		require.NoError(t, starter.Abort(ctx, sc.ID))
		bal, _ := e.ledger.State()
		require.Equal(t, int32(43), bal, "recovery leaves a started scan alone")
	})

	for _, step := range []string{"recorded", "claimed", "debited", "queued"} {
		t.Run("failure after "+step, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			starter, reg := e.saga(t)
			injected := errors.New("injected")
			starter.Failpoint = func(s string) error {
				if s == step {
					return injected
				}
				return nil
			}
			in := e.request()
			sc, err := starter.Start(ctx, in)
			require.ErrorIs(t, err, injected)
			bal, refunds := e.ledger.State()
			require.Equal(t, int32(50), bal, "no credits lost")
			if step == "debited" || step == "queued" {
				require.Equal(t, 1, refunds, "refunded exactly once")
				require.True(t, e.ledger.Refunded[lifecycle.CreditReference(sc.ID)], "under the reference the debit used")
			}
			require.Empty(t, e.claims.Claimant(in.Estimation.GetId()))
			row, err := e.st.ByID(ctx, sc.ID)
			require.NoError(t, err)
			require.Equal(t, store.Aborted, row.StartState)
			_, err = e.st.Get(ctx, e.org, sc.ID)
			require.ErrorIs(t, err, store.ErrNotFound)
			require.NotContains(t, e.jobsOf(t, sc.ID), jobs.RunScan{}.Kind())
			require.Empty(t, reg.ScanIDs())
		})
	}

	t.Run("crash after debit, then recovery", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		starter, _ := e.saga(t)
		starter.Failpoint = func(s string) error {
			if s == "debited" {
				return service.ErrSimulatedCrash
			}
			return nil
		}
		in := e.request()
		sc, err := starter.Start(ctx, in)
		require.ErrorIs(t, err, service.ErrSimulatedCrash)
		bal, _ := e.ledger.State()
		require.Equal(t, int32(43), bal, "a crash undoes nothing by itself")
		require.Contains(t, e.jobsOf(t, sc.ID), jobs.RecoverStart{}.Kind(), "the recovery job was recorded with the scan")

		worker := &jobs.RecoverStartWorker{Compensations: e.comp}
		for range 2 {
			require.NoError(t, worker.Work(ctx, &river.Job[jobs.RecoverStart]{Args: jobs.RecoverStart{ScanID: sc.ID}}))
		}
		bal, refunds := e.ledger.State()
		require.Equal(t, int32(50), bal)
		require.Equal(t, 1, refunds)
		require.Empty(t, e.claims.Claimant(in.Estimation.GetId()))
		// The request, had it survived, can no longer complete the start.
		var started bool
		require.NoError(t, pgx.BeginFunc(ctx, e.st.Pool, func(tx pgx.Tx) error {
			started, err = e.st.MarkStarted(ctx, tx, sc.ID)
			return err
		}))
		require.False(t, started)
	})
}
