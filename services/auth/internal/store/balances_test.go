package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"
)

// gatedQuerier runs each balance statement on the real pool, then holds its
// rows until the test releases them, reporting the statement's organizations
// as it arrives.
type gatedQuerier struct {
	s       *Store
	arrived chan []string
	release chan struct{}
	done    chan struct{} // closed when the test ends: nothing is held any more
}

func newGate(t *testing.T, s *Store) *gatedQuerier {
	g := &gatedQuerier{s: s, arrived: make(chan []string, 16), release: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() { close(g.done) }) // before the pool closes
	return g
}

func (g *gatedQuerier) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := g.s.Pool.Query(ctx, sql, args...)
	var orgs []string
	switch a := args[0].(type) {
	case string:
		orgs = []string{a}
		if list, ok := strings.CutPrefix(a, "{"); ok { // several, one array literal (ids that are not uuids)
			orgs = strings.Split(strings.TrimSuffix(list, "}"), ",")
		}
	case []string:
		orgs = slices.Clone(a)
	case []pgtype.UUID: // several, in binary
		for _, id := range a {
			orgs = append(orgs, uuid.UUID(id.Bytes).String())
		}
	}
	slices.Sort(orgs)
	select {
	case g.arrived <- orgs:
		select {
		case <-g.release:
		case <-g.done:
		}
	case <-g.done:
	}
	return rows, err
}

// next waits for the next statement to arrive.
func (g *gatedQuerier) next(t *testing.T) []string {
	t.Helper()
	select {
	case orgs := <-g.arrived:
		return orgs
	case <-time.After(10 * time.Second):
		t.Fatal("no balance statement arrived")
		return nil
	}
}

// let releases the statement held longest.
func (g *gatedQuerier) let(t *testing.T) {
	t.Helper()
	select {
	case g.release <- struct{}{}:
	case <-time.After(10 * time.Second):
		t.Fatal("no balance statement held")
	}
}

// waitReads waits until the collecting batch holds n reads.
func waitReads(t *testing.T, r *balanceReads, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.next != nil && r.next.reads == n
	}, 10*time.Second, time.Millisecond)
}

type balanceAnswer struct {
	org string
	bal int32
	err error
}

func readAsync(ctx context.Context, r *balanceReads, q pgxQuerier, org string, out chan<- balanceAnswer) {
	go func() {
		bal, err := r.read(ctx, q, org)
		out <- balanceAnswer{org, bal, err}
	}()
}

func answer(t *testing.T, out <-chan balanceAnswer) balanceAnswer {
	t.Helper()
	select {
	case a := <-out:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("a balance read did not return")
		return balanceAnswer{}
	}
}

// twoOrgs is setup with two organizations, holding 10 and 25 credits.
func twoOrgs(t *testing.T) (s *Store, org1, org2 string) {
	t.Helper()
	s, org1 = funded(t, 10)
	org2, _, err := s.CreateOrg(context.Background(), "org2", "auto", "owner", 25)
	require.NoError(t, err)
	return s, org1, org2
}

func TestBalance(t *testing.T) {
	t.Parallel()
	s, org1, org2 := twoOrgs(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		org     string
		want    int32
		wantErr error
	}{
		{"one organization", org1, 10, nil},
		{"another", org2, 25, nil},
		{"upper-case id", strings.ToUpper(org2), 25, nil},
		{"unknown organization", uuid.NewString(), 0, ErrNotFound},
		{"not an id", "org-1", 0, ErrNotFound},
		{"empty", "", 0, ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bal, err := s.Balance(ctx, tc.org)
			require.ErrorIs(t, err, tc.wantErr)
			require.Equal(t, tc.want, bal)
		})
	}

	// Many at once, over both organizations and an unknown one: each gets
	// its own answer whichever batch it lands in.
	var wg sync.WaitGroup
	unknown := uuid.NewString()
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			org, want, wantErr := []string{org1, org2, unknown}[i%3], []int32{10, 25, 0}[i%3], []error{nil, nil, ErrNotFound}[i%3]
			bal, err := s.Balance(ctx, org)
			if !errors.Is(err, wantErr) || bal != want {
				t.Errorf("read %d of %s: %d, %v; want %d, %v", i, org, bal, err, want, wantErr)
			}
		}()
	}
	wg.Wait()
}

// Reads that arrive while a statement is in flight are answered together by
// the next statement, sent after they all arrived: a read never gets the
// answer of a statement that ran before it was asked.
func TestBalanceReadsCoalesce(t *testing.T) {
	t.Parallel()
	s, org1, org2 := twoOrgs(t)
	ctx := context.Background()
	var r balanceReads
	g := newGate(t, s)
	out := make(chan balanceAnswer, 64)

	readAsync(ctx, &r, g, org1, out)
	require.Equal(t, []string{org1}, g.next(t)) // ran, its rows held

	// A debit commits after that statement ran; the reads asked after it
	// must see it.
	_, applied, err := s.Debit(ctx, org1, 3, "scan:1")
	require.NoError(t, err)
	require.True(t, applied)
	const later = 20
	for i := range later {
		readAsync(ctx, &r, g, []string{org1, org2}[i%2], out)
	}
	waitReads(t, &r, later)

	g.let(t)
	first := answer(t, out)
	require.Equal(t, balanceAnswer{org1, 10, nil}, first, "the read asked before the debit")
	select {
	case a := <-out:
		t.Fatalf("a later read was answered by the earlier statement: %+v", a)
	default:
	}

	want := []string{org1, org2}
	slices.Sort(want)
	require.Equal(t, want, g.next(t), "one statement for every later read")

	// The same holds for a batch's statement: it ran, another debit
	// commits, and a read asked now waits for a statement of its own.
	_, applied, err = s.Debit(ctx, org1, 2, "scan:2")
	require.NoError(t, err)
	require.True(t, applied)
	readAsync(ctx, &r, g, org1, out)
	waitReads(t, &r, 1)

	g.let(t)
	for range later {
		a := answer(t, out)
		require.NoError(t, a.err)
		require.Equal(t, map[string]int32{org1: 7, org2: 25}[a.org], a.bal, a.org)
	}
	require.Equal(t, []string{org1}, g.next(t))
	g.let(t)
	require.Equal(t, balanceAnswer{org1, 5, nil}, answer(t, out), "the read asked after the second debit")
	select {
	case orgs := <-g.arrived:
		t.Fatalf("an extra statement for %v", orgs)
	default:
	}

	// Nothing in flight: the next read runs at once, on its own.
	readAsync(ctx, &r, g, org2, out)
	require.Equal(t, []string{org2}, g.next(t))
	g.let(t)
	require.Equal(t, balanceAnswer{org2, 25, nil}, answer(t, out))
}

// A read whose context ends returns at once; the statement of its batch
// still runs for the others, even when the read that started the batch is
// the one that gave up.
func TestBalanceReadsCancel(t *testing.T) {
	t.Parallel()
	s, org := funded(t, 10)
	ctx := context.Background()
	var r balanceReads
	g := newGate(t, s)
	out := make(chan balanceAnswer, 8)

	readAsync(ctx, &r, g, org, out)
	g.next(t) // in flight

	starter, cancelStarter := context.WithCancel(ctx)
	readAsync(starter, &r, g, org, out) // starts the next batch
	readAsync(ctx, &r, g, org, out)
	waitReads(t, &r, 2)
	cancelStarter()
	require.ErrorIs(t, answer(t, out).err, context.Canceled)

	g.let(t)
	require.Equal(t, balanceAnswer{org, 10, nil}, answer(t, out))
	require.Equal(t, []string{org}, g.next(t))
	g.let(t)
	require.Equal(t, balanceAnswer{org, 10, nil}, answer(t, out))
}
