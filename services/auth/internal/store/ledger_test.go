package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func ledgerKinds(t *testing.T, s *Store, org string) (kinds []string, sum int32) {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT kind, delta FROM auth.credit_ledger WHERE org_id = $1 ORDER BY id`, org)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var k string
		var d int32
		require.NoError(t, rows.Scan(&k, &d))
		kinds = append(kinds, k)
		sum += d
	}
	require.NoError(t, rows.Err())
	return kinds, sum
}

// funded is setup with credits granted to the organization.
func funded(t *testing.T, credits int32) (*Store, string) {
	t.Helper()
	s, org, _ := setup(t)
	_, err := s.Grant(context.Background(), org, credits)
	require.NoError(t, err)
	return s, org
}

func TestLedgerArithmetic(t *testing.T) {
	t.Parallel()
	s, _, _ := setup(t)
	ctx := context.Background()
	type step struct {
		op      string // grant, debit, refund
		amount  int32
		ref     string
		wantBal int32
		wantErr error
		applied bool  // debit: whether it took credits
		refund  int32 // refund: credits returned
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"grant then debit", []step{
			{op: "grant", amount: 10, wantBal: 10},
			{op: "debit", amount: 4, ref: "a", wantBal: 6, applied: true},
		}},
		{"debit is idempotent by reference", []step{
			{op: "grant", amount: 10, wantBal: 10},
			{op: "debit", amount: 4, ref: "a", wantBal: 6, applied: true},
			{op: "debit", amount: 4, ref: "a", wantBal: 6, applied: false},
			{op: "debit", amount: 9, ref: "a", wantBal: 6, applied: false},
		}},
		{"insufficient credits take nothing", []step{
			{op: "grant", amount: 3, wantBal: 3},
			{op: "debit", amount: 4, ref: "a", wantErr: ErrInsufficientCredit},
			{op: "debit", amount: 3, ref: "b", wantBal: 0, applied: true},
			{op: "debit", amount: 1, ref: "c", wantErr: ErrInsufficientCredit},
		}},
		{"a refused reference can be debited later", []step{
			{op: "debit", amount: 2, ref: "a", wantErr: ErrInsufficientCredit},
			{op: "grant", amount: 2, wantBal: 2},
			{op: "debit", amount: 2, ref: "a", wantBal: 0, applied: true},
		}},
		{"refund returns the debit once", []step{
			{op: "grant", amount: 10, wantBal: 10},
			{op: "debit", amount: 7, ref: "a", wantBal: 3, applied: true},
			{op: "refund", ref: "a", wantBal: 10, refund: 7},
			{op: "refund", ref: "a", wantBal: 10, refund: 0},
		}},
		{"refund of an unknown reference refunds nothing", []step{
			{op: "grant", amount: 5, wantBal: 5},
			{op: "refund", ref: "never", wantBal: 5, refund: 0},
		}},
		{"a refunded reference is not debited again", []step{
			{op: "grant", amount: 10, wantBal: 10},
			{op: "debit", amount: 7, ref: "a", wantBal: 3, applied: true},
			{op: "refund", ref: "a", wantBal: 10, refund: 7},
			{op: "debit", amount: 7, ref: "a", wantBal: 10, applied: false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Balances and references are per organization: each case
			// has its own in one database.
			org, _, err := s.CreateOrg(ctx, tc.name, "auto", "owner", 0)
			require.NoError(t, err)
			for i, st := range tc.steps {
				var bal int32
				var err error
				switch st.op {
				case "grant":
					bal, err = s.Grant(ctx, org, st.amount)
				case "debit":
					var applied bool
					bal, applied, err = s.Debit(ctx, org, st.amount, st.ref)
					if st.wantErr == nil {
						require.Equal(t, st.applied, applied, "step %d", i)
					}
				case "refund":
					var refunded int32
					bal, refunded, err = s.Refund(ctx, org, st.ref)
					require.Equal(t, st.refund, refunded, "step %d", i)
				}
				if st.wantErr != nil {
					require.ErrorIs(t, err, st.wantErr, "step %d", i)
					continue
				}
				require.NoError(t, err, "step %d", i)
				require.Equal(t, st.wantBal, bal, "step %d", i)
				got, err := s.Balance(ctx, org)
				require.NoError(t, err)
				require.Equal(t, st.wantBal, got, "step %d: stored balance", i)
			}
			// The ledger accounts for the balance exactly.
			_, sum := ledgerKinds(t, s, org)
			bal, err := s.Balance(ctx, org)
			require.NoError(t, err)
			require.Equal(t, bal, sum)
		})
	}
}

func TestLedgerUnknownOrganization(t *testing.T) {
	t.Parallel()
	s, _, _ := setup(t)
	ctx := context.Background()
	_, err := s.Balance(ctx, nobody)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.Grant(ctx, nobody, 5)
	require.ErrorIs(t, err, ErrNotFound)
	_, _, err = s.Debit(ctx, nobody, 1, "a")
	require.ErrorIs(t, err, ErrNotFound)
	_, _, err = s.Refund(ctx, nobody, "a")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestLedgerReferencesArePerOrganization(t *testing.T) {
	t.Parallel()
	s, a, _ := setup(t)
	ctx := context.Background()
	b, _, err := s.CreateOrg(ctx, "other", "auto", "owner", 5)
	require.NoError(t, err)
	_, err = s.Grant(ctx, a, 5)
	require.NoError(t, err)
	_, applied, err := s.Debit(ctx, a, 5, "shared-ref")
	require.NoError(t, err)
	require.True(t, applied)
	bal, applied, err := s.Debit(ctx, b, 5, "shared-ref")
	require.NoError(t, err)
	require.True(t, applied, "another organization's debit of the same reference is its own")
	require.Equal(t, int32(0), bal)
	_, refunded, err := s.Refund(ctx, b, "shared-ref")
	require.NoError(t, err)
	require.Equal(t, int32(5), refunded)
	bal, err = s.Balance(ctx, a)
	require.NoError(t, err)
	require.Equal(t, int32(0), bal, "refunding b leaves a alone")
}

func TestConcurrentDebitsNeverOverdraw(t *testing.T) {
	t.Parallel()
	s, org := funded(t, 10)
	ctx := context.Background()

	const n = 24
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied, refused := 0, 0
	var unexpected []error
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half the calls repeat another call's reference.
			_, ok, err := s.Debit(ctx, org, 3, fmt.Sprintf("ref-%d", i/2))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && ok:
				applied++
			case err == nil:
			case errors.Is(err, ErrInsufficientCredit):
				refused++
			default:
				unexpected = append(unexpected, err)
			}
		}()
	}
	wg.Wait()
	require.Empty(t, unexpected)
	bal, err := s.Balance(ctx, org)
	require.NoError(t, err)
	require.Equal(t, 3, applied, "10 credits pay for three debits of 3")
	require.Equal(t, int32(1), bal)
	kinds, sum := ledgerKinds(t, s, org)
	require.Equal(t, []string{"grant", "debit", "debit", "debit"}, kinds)
	require.Equal(t, bal, sum)
	require.Positive(t, refused)

	// Concurrent refunds of one reference return its credits once.
	var refs []string
	rows, err := s.Pool.Query(ctx, `SELECT reference FROM auth.credit_ledger WHERE org_id = $1 AND kind = 'debit'`, org)
	require.NoError(t, err)
	for rows.Next() {
		var r string
		require.NoError(t, rows.Scan(&r))
		refs = append(refs, r)
	}
	require.NoError(t, rows.Err())
	var total int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, got, err := s.Refund(ctx, org, refs[0])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				unexpected = append(unexpected, err)
			}
			total += got
		}()
	}
	wg.Wait()
	require.Empty(t, unexpected)
	require.Equal(t, int32(3), total)
	bal, err = s.Balance(ctx, org)
	require.NoError(t, err)
	require.Equal(t, int32(4), bal)
}

// ledgerChain checks that each ledger row's balance_after is the previous
// one plus its delta, and returns the last balance_after.
func ledgerChain(t *testing.T, s *Store, org string) int32 {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT delta, balance_after FROM auth.credit_ledger WHERE org_id = $1 ORDER BY id`, org)
	require.NoError(t, err)
	defer rows.Close()
	var prev int32
	for i := 0; rows.Next(); i++ {
		var delta, after int32
		require.NoError(t, rows.Scan(&delta, &after))
		require.Equal(t, prev+delta, after, "ledger row %d", i)
		require.GreaterOrEqual(t, after, int32(0), "ledger row %d", i)
		prev = after
	}
	require.NoError(t, rows.Err())
	return prev
}

func TestLedgerIsAppendOnlyAndBalancesNeverNegative(t *testing.T) {
	t.Parallel()
	s, org := funded(t, 4)
	ctx := context.Background()
	_, _, err := s.Debit(ctx, org, 4, "scan:1")
	require.NoError(t, err)

	for name, stmt := range map[string]string{
		"rewrite a ledger row": `UPDATE auth.credit_ledger SET delta = 0 WHERE org_id = $1`,
		"delete a ledger row":  `DELETE FROM auth.credit_ledger WHERE org_id = $1`,
		"overdraw the balance": `UPDATE auth.credit_balances SET balance = balance - 1 WHERE org_id = $1`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Pool.Exec(ctx, stmt, org)
			require.Error(t, err, "the schema refuses it")
		})
	}
	kinds, sum := ledgerKinds(t, s, org)
	require.Equal(t, []string{"grant", "debit"}, kinds)
	require.Zero(t, sum)
	bal, err := s.Balance(ctx, org)
	require.NoError(t, err)
	require.Zero(t, bal)
}

func TestGrantBeyondTheLargestBalanceIsRefused(t *testing.T) {
	t.Parallel()
	s, org, _ := setup(t)
	ctx := context.Background()
	const most = int32(1<<31 - 1)
	bal, err := s.Grant(ctx, org, most-1)
	require.NoError(t, err)
	require.Equal(t, most-1, bal)
	bal, err = s.Grant(ctx, org, 1)
	require.NoError(t, err)
	require.Equal(t, most, bal)
	_, err = s.Grant(ctx, org, 1)
	require.ErrorIs(t, err, ErrBalanceTooLarge)
	bal, err = s.Balance(ctx, org)
	require.NoError(t, err)
	require.Equal(t, most, bal, "a refused grant changes nothing")
	require.Equal(t, most, ledgerChain(t, s, org))
}

// TestConcurrentLedgerTraffic runs grants, debits and refunds against one
// balance at once: whatever order they commit in, the balance never goes
// negative, equals the ledger's sum, and every reference is charged and
// refunded at most once.
func TestConcurrentLedgerTraffic(t *testing.T) {
	t.Parallel()
	s, org := funded(t, 5)
	ctx := context.Background()

	const workers = 12
	var wg sync.WaitGroup
	errs := make(chan error, 4*workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref := fmt.Sprintf("scan:%d", i%4)
			switch i % 3 {
			case 0:
				if _, err := s.Grant(ctx, org, 2); err != nil {
					errs <- err
				}
			case 1:
				if _, _, err := s.Debit(ctx, org, 3, ref); err != nil && !errors.Is(err, ErrInsufficientCredit) {
					errs <- err
				}
			default:
				if _, _, err := s.Debit(ctx, org, 3, ref); err != nil && !errors.Is(err, ErrInsufficientCredit) {
					errs <- err
				}
				if _, _, err := s.Refund(ctx, org, ref); err != nil {
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

	bal, err := s.Balance(ctx, org)
	require.NoError(t, err)
	require.GreaterOrEqual(t, bal, int32(0))
	require.Equal(t, bal, ledgerChain(t, s, org), "the last ledger row holds the balance")
	_, sum := ledgerKinds(t, s, org)
	require.Equal(t, bal, sum)
	var dupes int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT kind, reference FROM auth.credit_ledger
		WHERE org_id = $1 AND reference IS NOT NULL GROUP BY kind, reference HAVING count(*) > 1) d`, org).Scan(&dupes))
	require.Zero(t, dupes)
	var grants int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM auth.credit_ledger WHERE org_id = $1 AND kind = 'grant'`, org).Scan(&grants))
	require.Equal(t, 1+workers/3, grants)
}
