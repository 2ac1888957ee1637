package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// key names this package's template database.
const key = "scan_store"

// setup runs the test in parallel on a store of its own and names an
// organization.
func setup(t *testing.T) (context.Context, *store.Store, string) {
	t.Helper()
	t.Parallel()
	return context.Background(), storetest.New(t, key), uuid.NewString()
}

func byID(t *testing.T, st *store.Store, id string) store.Scan {
	t.Helper()
	sc, err := st.ByID(context.Background(), id)
	require.NoError(t, err)
	return sc
}

func statusOf(t *testing.T, st *store.Store, id string) vocab.ScanStatus {
	t.Helper()
	s, err := st.Status(context.Background(), id)
	require.NoError(t, err)
	return s
}

// TestStartSagaStates: a recorded start is invisible to its organization
// until MarkStarted; recovery's BeginAbort takes a start that has not
// finished (and again one it is still undoing), after which the request
// can no longer complete it; a started or aborted scan is left alone.
func TestStartSagaStates(t *testing.T) {
	ctx, st, org := setup(t)
	sc := storetest.Scan(org)
	sc.ScanType = ""
	sc.TargetURLs = []string{"https://example.com/app"}
	sc.Repos = []store.Repo{{URL: "https://git.example.com/a/b", Branch: "main", Source: "public", CommitSHA: "abc", BaseBranch: "dev", BaseCommit: "def", PullRequest: 4}}
	require.NoError(t, db.InTx(ctx, st.Pool, func(tx pgx.Tx) error { return st.InsertStarting(ctx, tx, sc) }))

	got, err := st.ByID(ctx, sc.ID)
	require.NoError(t, err)
	require.Equal(t, store.Starting, got.StartState)
	require.Equal(t, vocab.ScanPending, got.Status)
	require.Equal(t, "full", got.ScanType, "an empty scan type is the column's default")
	require.Equal(t, sc.Repos, got.Repos)
	require.Equal(t, sc.TargetURLs, got.TargetURLs)
	require.Equal(t, int32(7), got.Credits)
	_, err = st.Get(ctx, org, sc.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "a start in progress is not visible")

	markStarted := func(id string) bool {
		var ok bool
		require.NoError(t, db.InTx(ctx, st.Pool, func(tx pgx.Tx) error {
			var err error
			ok, err = st.MarkStarted(ctx, tx, id)
			return err
		}))
		return ok
	}
	require.True(t, markStarted(sc.ID))
	require.False(t, markStarted(sc.ID), "a start completes once")
	got, err = st.Get(ctx, org, sc.ID)
	require.NoError(t, err)
	require.Equal(t, store.Started, got.StartState)
	_, err = st.Get(ctx, uuid.NewString(), sc.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "another organization's scan is not visible")
	_, ok, err := st.BeginAbort(ctx, sc.ID)
	require.NoError(t, err)
	require.False(t, ok, "a started scan is not aborted")

	// Recovery takes a start that has not finished.
	b := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanPending, store.Starting)
	row, ok, err := st.BeginAbort(ctx, b)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, b, row.ID)
	require.Equal(t, store.Aborting, row.StartState)
	require.False(t, markStarted(b), "the request cannot complete a start recovery is undoing")
	_, ok, err = st.BeginAbort(ctx, b)
	require.NoError(t, err)
	require.True(t, ok, "an undo in progress may be retried")
	require.NoError(t, st.FinishAbort(ctx, b))
	got = byID(t, st, b)
	require.Equal(t, store.Aborted, got.StartState)
	_, ok, err = st.BeginAbort(ctx, b)
	require.NoError(t, err)
	require.False(t, ok, "an aborted start is undone once")

	_, err = st.ByID(ctx, uuid.NewString())
	require.ErrorIs(t, err, store.ErrNotFound)
}

// TestRunStates: a started scan runs, records progress that never goes
// backwards and ends once, completed or failed; Status follows it.
func TestRunStates(t *testing.T) {
	ctx, st, org := setup(t)
	a := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanPending, store.Started)

	require.NoError(t, st.SetProgress(ctx, a, 50), "progress of a pending scan is ignored")
	started, err := st.StartRunning(ctx, a, org, 0)
	require.NoError(t, err)
	require.True(t, started)
	require.Equal(t, vocab.ScanRunning, statusOf(t, st, a))
	require.NoError(t, st.SetProgress(ctx, a, 40))
	require.NoError(t, st.SetProgress(ctx, a, 20))
	got := byID(t, st, a)
	require.Equal(t, int32(40), got.Progress, "progress never goes backwards")
	require.NotNil(t, got.StartedAt)
	require.Nil(t, got.CompletedAt)

	require.NoError(t, st.Complete(ctx, a))
	got = byID(t, st, a)
	require.Equal(t, vocab.ScanCompleted, got.Status)
	require.Equal(t, int32(100), got.Progress)
	require.NotNil(t, got.CompletedAt)
	failed, err := st.Fail(ctx, a, "late")
	require.NoError(t, err)
	require.False(t, failed, "an ended scan does not fail")
	_, err = st.StartRunning(ctx, a, org, 0)
	require.ErrorIs(t, err, store.ErrNotRunnable)

	b := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanRunning, store.Started)
	failed, err = st.Fail(ctx, b, "The scan could not be completed")
	require.NoError(t, err)
	require.True(t, failed)
	got = byID(t, st, b)
	require.Equal(t, vocab.ScanFailed, got.Status)
	require.NotNil(t, got.Error)
	require.Equal(t, "The scan could not be completed", *got.Error)
	require.NoError(t, st.Complete(ctx, b))
	require.Equal(t, vocab.ScanFailed, statusOf(t, st, b), "a failed scan does not complete")

	_, err = st.Status(ctx, uuid.NewString())
	require.ErrorIs(t, err, store.ErrNotFound)
}

// TestList: pages of an organization's started scans, filtered by status
// and sorted, with the total of the filter.
func TestList(t *testing.T) {
	ctx, st, org := setup(t)
	var ids []string
	for i, s := range []vocab.ScanStatus{vocab.ScanCompleted, vocab.ScanRunning, vocab.ScanCompleted, vocab.ScanFailed} {
		id := storetest.Insert(t, st, storetest.Scan(org), s, store.Started)
		_, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET created_at = now() - make_interval(mins => $2),
			updated_at = now() - make_interval(mins => $3) WHERE id = $1`, id, 10-i, []int{3, 1, 4, 2}[i])
		require.NoError(t, err)
		ids = append(ids, id)
	}
	storetest.Insert(t, st, storetest.Scan(org), vocab.ScanPending, store.Starting)               // not started: never listed
	storetest.Insert(t, st, storetest.Scan(uuid.NewString()), vocab.ScanCompleted, store.Started) // another organization

	list := func(q store.ListQuery) ([]string, int32) {
		q.OrgID = org
		scans, total, err := st.List(ctx, q)
		require.NoError(t, err)
		var out []string
		for _, s := range scans {
			out = append(out, s.ID)
		}
		return out, total
	}
	got, total := list(store.ListQuery{SortBy: "created_at", SortOrder: "DESC", Page: 1, Limit: 10})
	require.Equal(t, []string{ids[3], ids[2], ids[1], ids[0]}, got)
	require.Equal(t, int32(4), total)
	got, total = list(store.ListQuery{SortBy: "created_at", SortOrder: "ASC", Page: 2, Limit: 3})
	require.Equal(t, []string{ids[3]}, got)
	require.Equal(t, int32(4), total)
	got, total = list(store.ListQuery{Status: string(vocab.ScanCompleted), SortBy: "created_at", SortOrder: "ASC", Page: 1, Limit: 10})
	require.Equal(t, []string{ids[0], ids[2]}, got)
	require.Equal(t, int32(2), total)
	got, _ = list(store.ListQuery{SortBy: "updated_at", SortOrder: "DESC", Page: 1, Limit: 10})
	require.Equal(t, []string{ids[1], ids[3], ids[0], ids[2]}, got)
	got, _ = list(store.ListQuery{SortBy: "updated_at", SortOrder: "ASC", Page: 2, Limit: 2})
	require.Equal(t, []string{ids[3], ids[1]}, got)
	got, _ = list(store.ListQuery{SortBy: "status", SortOrder: "DESC", Page: 1, Limit: 10})
	require.Equal(t, []string{ids[1], ids[3], ids[2], ids[0]}, got, "by status, then created_at")
	got, total = list(store.ListQuery{Status: string(vocab.ScanCompleted), SortBy: "updated_at", SortOrder: "DESC", Page: 1, Limit: 10})
	require.Equal(t, []string{ids[0], ids[2]}, got)
	require.Equal(t, int32(2), total)
	got, total = list(store.ListQuery{Status: string(vocab.ScanCompleted), SortBy: "created_at", SortOrder: "ASC", Page: 3, Limit: 10})
	require.Empty(t, got, "a page past the end")
	require.Equal(t, int32(2), total)
	_, _, err := st.List(ctx, store.ListQuery{OrgID: org, SortBy: "credits", Page: 1, Limit: 1})
	require.Error(t, err, "only the documented sort columns")
}

// TestStranded: the sweeper sees started, unfinished scans idle for longer
// than the idle time whose run job is gone, and no other.
func TestStranded(t *testing.T) {
	ctx, st, org := setup(t)
	idle := func(id string) {
		_, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET updated_at = now() - interval '10 minutes' WHERE id = $1`, id)
		require.NoError(t, err)
	}
	job := func(id, state string) {
		_, err := st.Pool.Exec(ctx, `INSERT INTO scan.river_job (args, kind, max_attempts, queue, state, finalized_at)
			VALUES (jsonb_build_object('scan_id', $1::text), 'run_scan', 3, 'scans', $2::scan.river_job_state,
			CASE WHEN $2 IN ('discarded', 'completed', 'cancelled') THEN now() END)`, id, state)
		require.NoError(t, err)
	}
	noJob := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanRunning, store.Started)
	idle(noJob)
	discarded := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanPending, store.Started)
	idle(discarded)
	job(discarded, "discarded")
	queued := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanRunning, store.Started)
	idle(queued)
	job(queued, "retryable")
	storetest.Insert(t, st, storetest.Scan(org), vocab.ScanRunning, store.Started) // not idle
	ended := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanFailed, store.Started)
	idle(ended)
	starting := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanPending, store.Starting)
	idle(starting)

	got, err := st.Stranded(ctx, 5*time.Minute)
	require.NoError(t, err)
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	require.ElementsMatch(t, []string{noJob, discarded}, ids)
}

// TestDocuments: documents are the organization's own; lists carry no
// content; MissingDocuments names the ids that are not the
// organization's, DocumentsContent returns them in the order asked.
func TestDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, key)
	org, other := uuid.NewString(), uuid.NewString()
	create := func(orgID, name, content string) store.Document {
		d, err := st.CreateDocument(ctx, store.Document{ID: uuid.NewString(), OrgID: orgID, Name: name, Content: content, Size: int32(len(content))}, store.DocumentQuota{})
		require.NoError(t, err)
		require.False(t, d.CreatedAt.IsZero())
		return d
	}
	a, b := create(org, "a", "exclude: vendor/"), create(org, "b", "login with admin")
	foreign := create(other, "c", "secret")

	list, err := st.ListDocuments(ctx, org)
	require.NoError(t, err)
	require.Len(t, list, 2)
	for _, d := range list {
		require.Empty(t, d.Content, "lists carry no content")
		require.Contains(t, []string{a.ID, b.ID}, d.ID)
	}
	got, err := st.GetDocument(ctx, org, b.ID)
	require.NoError(t, err)
	require.Equal(t, "login with admin", got.Content)
	require.Equal(t, int32(16), got.Size)
	_, err = st.GetDocument(ctx, org, foreign.ID)
	require.ErrorIs(t, err, store.ErrNotFound)

	unknown := uuid.NewString()
	missing, err := st.MissingDocuments(ctx, org, []string{a.ID, foreign.ID, unknown})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{foreign.ID, unknown}, missing)
	docs, err := st.DocumentsContent(ctx, org, []string{b.ID, a.ID})
	require.NoError(t, err)
	require.Len(t, docs, 2)
	require.Equal(t, []string{"login with admin", "exclude: vendor/"}, []string{docs[0].Content, docs[1].Content})
	_, err = st.DocumentsContent(ctx, org, []string{a.ID, foreign.ID})
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestCancel(t *testing.T) {
	ctx, st, org := setup(t)
	cancel := func(orgID, id string) (store.Scan, vocab.ScanStatus, error) {
		var sc store.Scan
		var prev vocab.ScanStatus
		err := db.InTx(ctx, st.Pool, func(tx pgx.Tx) error {
			var err error
			sc, prev, err = st.Cancel(ctx, tx, orgID, id)
			return err
		})
		return sc, prev, err
	}

	tests := []struct {
		name       string
		status     vocab.ScanStatus
		startState store.StartState
		otherOrg   bool
		wantErr    error
	}{
		{name: "pending", status: vocab.ScanPending, startState: store.Started},
		{name: "running", status: vocab.ScanRunning, startState: store.Started},
		{name: "completed", status: vocab.ScanCompleted, startState: store.Started, wantErr: store.ErrTerminal},
		{name: "failed", status: vocab.ScanFailed, startState: store.Started, wantErr: store.ErrTerminal},
		{name: "cancelled", status: vocab.ScanCancelled, startState: store.Started, wantErr: store.ErrTerminal},
		{name: "foreign", status: vocab.ScanPending, startState: store.Started, otherOrg: true, wantErr: store.ErrNotFound},
		{name: "start not finished", status: vocab.ScanPending, startState: store.Starting, wantErr: store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := storetest.Insert(t, st, storetest.Scan(org), tc.status, tc.startState)
			orgID := org
			if tc.otherOrg {
				orgID = uuid.NewString()
			}
			sc, prev, err := cancel(orgID, id)
			got, gerr := st.ByID(ctx, id)
			require.NoError(t, gerr)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Equal(t, tc.status, got.Status, "a refused cancel changes nothing")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.status, prev)
			require.Equal(t, vocab.ScanCancelled, sc.Status)
			require.NotNil(t, got.CompletedAt)
			running, err := st.StartRunning(ctx, id, orgID, 0)
			require.ErrorIs(t, err, store.ErrNotRunnable, "a cancelled scan never starts")
			require.False(t, running)
			require.NoError(t, st.Complete(ctx, id))
			_, err = st.Fail(ctx, id, "x")
			require.NoError(t, err)
			got, err = st.ByID(ctx, id)
			require.NoError(t, err)
			require.Equal(t, vocab.ScanCancelled, got.Status, "a worker finishing late does not overwrite the cancellation")
		})
	}
}

// TestEndedHook: every way a scan ends (completed, failed, cancelled) calls
// Ended once, inside the ending transaction, so a webhook event is queued
// with the status change or not at all; an end that changes nothing calls
// nothing.
func TestEndedHook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, key)
	pool := st.Pool
	var calls []string
	fail := false
	st.Ended = func(ctx context.Context, tx pgx.Tx, id string, status vocab.ScanStatus) error {
		// Inside the transaction: the new status is visible to it.
		var seen string
		if err := tx.QueryRow(ctx, `SELECT status FROM scan.scans WHERE id = $1`, id).Scan(&seen); err != nil {
			return err
		}
		calls = append(calls, seen+"/"+string(status))
		if fail {
			return errors.New("queue down")
		}
		return nil
	}
	org := uuid.NewString()
	insert := func(status vocab.ScanStatus) string {
		return storetest.Insert(t, st, storetest.Scan(org), status, store.Started)
	}
	status := func(id string) string {
		var s string
		require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM scan.scans WHERE id = $1`, id).Scan(&s))
		return s
	}

	a := insert(vocab.ScanRunning)
	require.NoError(t, st.Complete(ctx, a))
	b := insert(vocab.ScanRunning)
	ok, err := st.Fail(ctx, b, "boom")
	require.NoError(t, err)
	require.True(t, ok)
	c := insert(vocab.ScanPending)
	require.NoError(t, db.InTx(ctx, pool, func(tx pgx.Tx) error { _, _, err := st.Cancel(ctx, tx, org, c); return err }))
	require.Equal(t, []string{"completed/completed", "failed/failed", "cancelled/cancelled"}, calls)

	// Already ended: nothing changes, nothing is queued.
	require.NoError(t, st.Complete(ctx, c))
	ok, err = st.Fail(ctx, a, "late")
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, calls, 3)

	// When the event cannot be queued, the status does not change either.
	fail = true
	d := insert(vocab.ScanRunning)
	require.Error(t, st.Complete(ctx, d))
	require.Equal(t, string(vocab.ScanRunning), status(d))
	_, err = st.Fail(ctx, d, "boom")
	require.Error(t, err)
	require.Equal(t, string(vocab.ScanRunning), status(d))
}

// TestDocumentQuota: an organization's context documents are bounded in
// number and total size, also under concurrent creation.
func TestDocumentQuota(t *testing.T) {
	t.Parallel()
	st := storetest.New(t, key)
	ctx := context.Background()
	org := uuid.NewString()
	q := store.DocumentQuota{MaxCount: 3, MaxSize: 100}
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			_, err := st.CreateDocument(ctx, store.Document{ID: uuid.NewString(), OrgID: org, Name: "d", Content: "exclude: x", Size: 10}, q)
			errs <- err
		}()
	}
	var ok int
	for i := 0; i < 8; i++ {
		err := <-errs
		if err == nil {
			ok++
			continue
		}
		require.True(t, errors.Is(err, store.ErrQuota), err)
		require.ErrorContains(t, err, "already has 3 context documents")
	}
	require.Equal(t, 3, ok)
	_, err := st.CreateDocument(ctx, store.Document{ID: uuid.NewString(), OrgID: uuid.NewString(), Name: "big", Content: strings.Repeat("x", 101), Size: 101}, q)
	require.ErrorIs(t, err, store.ErrQuota)
	require.ErrorContains(t, err, "more than the 100 allowed")
}

// TestStartRunningPerOrg: at most limit scans of an organization run at
// once; the same scan again (a retried attempt) is not counted against
// itself; other organizations are not held back.
func TestStartRunningPerOrg(t *testing.T) {
	t.Parallel()
	st := storetest.New(t, key)
	ctx := context.Background()
	org := uuid.NewString()
	mk := func(orgID string) string {
		id := uuid.NewString()
		_, err := st.Pool.Exec(ctx, `INSERT INTO scan.scans (id, org_id, user_id, task_id, start_state, cost_estimation_id, repos, credits)
			VALUES ($1, $2, $3, 't', 'started', $4, '[]', 1)`, id, orgID, uuid.NewString(), uuid.NewString())
		require.NoError(t, err)
		return id
	}
	a, b, other := mk(org), mk(org), mk(uuid.NewString())
	for _, tc := range []struct {
		id, org string
		want    bool
	}{{a, org, true}, {b, org, false}, {a, org, true}, {other, "", true}} {
		o := tc.org
		if o == "" {
			require.NoError(t, st.Pool.QueryRow(ctx, `SELECT org_id::text FROM scan.scans WHERE id = $1`, tc.id).Scan(&o))
		}
		ok, err := st.StartRunning(ctx, tc.id, o, 1)
		require.NoError(t, err)
		require.Equal(t, tc.want, ok)
	}
	var status string
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT status FROM scan.scans WHERE id = $1`, b).Scan(&status))
	require.Equal(t, string(vocab.ScanPending), status)
	require.NoError(t, st.Complete(ctx, a))
	ok, err := st.StartRunning(ctx, b, org, 1)
	require.NoError(t, err)
	require.True(t, ok, "a finished scan frees its slot")
}
