package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentTriageQueues: triage changes crossing the same findings at
// once (single changes, bulk changes in any order of ids, duplicate links in
// both directions, comments) never fail for a deadlock, and the duplicate
// links stay sound: a canonical finding is never a duplicate itself, and a
// duplicate is resolved. (Explicit FOR UPDATE locks conflicted with the
// foreign key checks of duplicate links and thread entries, which deadlocked
// against bulk changes and against links in the other direction: 500s. The
// canonical finding was read without a lock, so two links made at once
// could chain duplicates.)
func TestConcurrentTriageQueues(t *testing.T) {
	u := newUnit(t)
	fps := make([]string, 16)
	for i := range fps {
		fps[i] = fmt.Sprintf("q-%02d", i)
	}
	ids := u.findings("https://git.example.com/acme/queue", fps...)
	states := []string{"open", "true_positive", "false_positive", "resolved", "accepted_risk"}
	sevs := []string{"critical", "high", "medium", "low", "info"}

	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(20261130, uint64(g)))
			pick := func() string { return ids[rng.IntN(len(ids))] }
			some := func() []string {
				perm := rng.Perm(len(ids))[:2+rng.IntN(10)]
				out := make([]string, len(perm))
				for i, j := range perm {
					out[i] = ids[j]
				}
				return out
			}
			for range 40 {
				var err error
				switch rng.IntN(6) {
				case 0:
					_, err = u.s.Apply(u.ctx, u.org, pick(), Update{State: ptr(states[rng.IntN(len(states))])}, apiActor)
				case 1:
					_, err = u.s.Apply(u.ctx, u.org, pick(), Update{Severity: ptr(sevs[rng.IntN(len(sevs))])}, apiActor)
				case 2:
					_, err = u.s.Apply(u.ctx, u.org, pick(), Update{DuplicateSet: true, DuplicateOf: ptr(pick())}, apiActor)
				case 3:
					_, err = u.s.ApplyBulk(u.ctx, u.org, some(), nil, Update{State: ptr(states[rng.IntN(len(states))]), Severity: ptr(sevs[rng.IntN(len(sevs))])}, apiActor)
				case 4:
					_, err = u.s.ApplyBulk(u.ctx, u.org, some(), nil, Update{DuplicateSet: true, DuplicateOf: ptr(pick())}, apiActor)
				case 5:
					_, err = u.s.AddComment(u.ctx, u.org, pick(), "looked at it", apiActor)
				}
				var inv *InvalidError
				if err != nil && !errors.As(err, &inv) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, u.count(`SELECT count(*) FROM findings.findings f JOIN findings.findings c ON c.id = f.duplicate_of
		WHERE c.duplicate_of IS NOT NULL`), "a canonical finding that is a duplicate itself")
	require.Zero(t, u.count(`SELECT count(*) FROM findings.findings WHERE duplicate_of IS NOT NULL AND state <> 'resolved'`),
		"a duplicate that is not resolved")
	// The totals the lists answer from the counters (kept by the changes'
	// triggers, concurrently) are the findings' own, across every scan and
	// within the one that found them.
	var scanID string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT scan_id::text FROM findings.occurrences WHERE finding_id = $1`, ids[0]).Scan(&scanID))
	for _, sev := range append([]string{""}, sevs...) {
		for _, st := range append([]string{""}, states...) {
			for _, scan := range []string{"", scanID} {
				got, err := u.s.Count(u.ctx, Filter{OrgID: u.org, Severity: sev, State: st, ScanID: scan})
				require.NoError(t, err)
				want := u.count(`SELECT count(*) FROM findings.findings f WHERE f.org_id = $1 AND f.verification_status = 'approved'
					AND ($2 = '' OR f.severity = $2) AND ($3 = '' OR f.state = $3)`, u.org, sev, st)
				require.EqualValues(t, want, got, "severity %q, state %q, scan %q", sev, st, scan)
			}
		}
	}
}
