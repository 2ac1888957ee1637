package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestNewIntakeSlotsRefusesNoSlot(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1} {
		_, err := NewIntakeSlots(n)
		require.ErrorContains(t, err, "at least 1", "n=%d", n)
	}
}

// waitFor polls cond until it holds; it fails the test after a minute,
// which only a hang reaches.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

// TestIntakeSlotsBoundReports holds the first report of a one-slot store
// inside its transaction (another transaction holds a lock its counters
// need) and checks that a second report waits for the slot, not in the
// database: only one backend waits on the lock, a waiting report gives up
// when its context ends without writing anything, and once the lock goes
// both remaining reports complete. Without the bound every report waits in
// the database.
func TestIntakeSlotsBoundReports(t *testing.T) {
	for _, tc := range []struct {
		name       string
		slots      int
		inDatabase int // reports waiting on the lock inside the database
	}{
		{"one slot", 1, 1},
		{"unbounded", 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newUnit(t)
			ctx, s := u.ctx, u.s
			if tc.slots > 0 {
				var err error
				s.Intake, err = NewIntakeSlots(tc.slots)
				require.NoError(t, err)
			}
			var dbName string
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT current_database()`).Scan(&dbName))
			// The watcher has a connection of its own: waiting reports may
			// hold every connection of the pool.
			watch, err := pgx.ConnectConfig(ctx, s.Pool.Config().ConnConfig)
			require.NoError(t, err)
			defer func() { _ = watch.Close(context.WithoutCancel(ctx)) }()

			lock, err := s.Pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = lock.Rollback(context.WithoutCancel(ctx)) }()
			_, err = lock.Exec(ctx, `LOCK TABLE findings.finding_counts IN EXCLUSIVE MODE`)
			require.NoError(t, err)

			report := func(ctx context.Context, fp string) error {
				sc := u.scan("https://git.example.com/acme/slots")
				_, err := s.Report(ctx, sc, []Reported{{Fingerprint: fp, Title: "SQL injection", Category: "injection",
					Severity: "high", Verified: true}}, true)
				return err
			}
			lockWaiters := func() int {
				var n int
				require.NoError(t, watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
					WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`, dbName).Scan(&n))
				return n
			}

			done := make(chan error, 3)
			go func() { done <- report(ctx, "first") }()
			waitFor(t, "the first report to wait on the lock", func() bool {
				select {
				case err := <-done:
					t.Fatalf("the first report ended: %v", err)
				default:
				}
				return lockWaiters() == 1
			})
			go func() { done <- report(ctx, "second") }()
			gone, cancel := context.WithCancel(ctx)
			defer cancel()
			abandoned := make(chan error, 1)
			go func() { abandoned <- report(gone, "abandoned") }()
			if tc.slots > 0 {
				waitFor(t, "two reports to wait for the slot", func() bool { return s.Intake.Waiting() == 2 })
			} else {
				waitFor(t, "every report to wait on the lock", func() bool { return lockWaiters() == 3 })
			}
			require.Equal(t, tc.inDatabase, lockWaiters())

			cancel()
			err = <-abandoned
			require.Error(t, err, "the abandoned report fails")
			require.NoError(t, lock.Rollback(ctx))
			for range 2 {
				require.NoError(t, <-done)
			}
			var fps []string
			rows, err := s.Pool.Query(ctx, `SELECT fingerprint FROM findings.findings WHERE org_id = $1 ORDER BY fingerprint`, u.org)
			require.NoError(t, err)
			for rows.Next() {
				var fp string
				require.NoError(t, rows.Scan(&fp))
				fps = append(fps, fp)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, []string{"first", "second"}, fps, fmt.Sprintf("%s: nothing of the abandoned report is written", tc.name))
		})
	}
}
