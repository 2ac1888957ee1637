package store

import (
	"context"
	"crypto/md5"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// statements records the statements a pool runs, batched ones included.
type statements struct {
	mu   sync.Mutex
	sqls []string
}

func (s *statements) record(sql string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sqls = append(s.sqls, sql)
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.record(d.SQL)
	return ctx
}
func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (s *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (s *statements) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	s.record(d.SQL)
}
func (s *statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// tracedPool returns a pool on pool's database whose connections report
// to tracer, with at most maxConns connections (0: the default).
func tracedPool(t *testing.T, pool *pgxpool.Pool, tracer pgx.QueryTracer, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	db.Configure(cfg.ConnConfig)
	cfg.ConnConfig.Tracer = tracer
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	traced, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(traced.Close)
	return traced
}

// reads returns the statements run since the last call, leaving out the
// transactions' own and their settings.
func (s *statements) reads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, q := range s.sqls {
		if w := strings.ToLower(strings.Fields(q)[0]); w != "begin" && w != "commit" && w != "rollback" && w != "set" {
			out = append(out, q)
		}
	}
	s.sqls = nil
	return out
}

// TestSearchHoldsLiveKeys: a search holds only the keys with findings of
// its severity and state (a path whose findings are all resolved cannot
// match an open-state filter), and a search its keys or counters show to
// be empty, or a page past its total, is answered without reading a page.
func TestSearchHoldsLiveKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "l", 40, func(i int, r *Reported) {
		r.AffectedFile = fmt.Sprintf("src/a%d.go", i%4)
		r.Verified = true
	})
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET state = 'resolved' WHERE org_id = $1 AND affected_file IN ('src/a0.go', 'src/a1.go')`,
		sc.OrgID); err != nil {
		t.Fatal(err)
	}
	key := func(path string) string { return uuid.UUID(md5.Sum([]byte(path))).String() }

	keys := func(f Filter) []string {
		t.Helper()
		r, err := s.Resolve(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(r.keys.file)
		slices.Sort(got)
		return got
	}
	live := []string{key("src/a2.go"), key("src/a3.go")}
	slices.Sort(live)
	all := append(slices.Clone(live), key("src/a0.go"), key("src/a1.go"))
	slices.Sort(all)
	for _, tc := range []struct {
		f    Filter
		want []string
	}{
		{Filter{FilePrefix: "src/a", State: "open"}, live},
		{Filter{FilePrefix: "src/a", State: "open", ScanID: sc.ID}, live},
		{Filter{FilePrefix: "src/a"}, all},
		{Filter{FilePrefix: "src/a0", State: "open"}, nil},
		{Filter{FilePrefix: "src/a0", State: "resolved"}, []string{key("src/a0.go")}},
	} {
		tc.f.OrgID = sc.OrgID
		if got := keys(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: keys %v, want %v", tc.f, got, tc.want)
		}
	}

	// A pool that records what List and Count run.
	rec := &statements{}
	ts := &Store{Pool: tracedPool(t, pool, rec, 0)}
	for _, tc := range []struct {
		name     string
		f        Filter
		total    int64
		rows     int
		pageRead bool
	}{
		{"no live key", Filter{FilePrefix: "src/a0", State: "open"}, 0, 0, false},
		{"no path", Filter{FilePrefix: "lib/"}, 0, 0, false},
		{"no live key in a scan", Filter{FilePrefix: "src/a1", State: "open", ScanID: sc.ID}, 0, 0, false},
		{"page past the total", Filter{FilePrefix: "src/a", State: "open", Offset: 20}, 20, 0, false},
		{"last page", Filter{FilePrefix: "src/a", State: "open", Offset: 15}, 20, 5, true},
		{"a scan's page", Filter{FilePrefix: "src/a", State: "open", ScanID: sc.ID, Offset: 15}, 20, 5, true},
	} {
		f := tc.f
		f.OrgID, f.SortBy, f.Limit = sc.OrgID, "found_at", 15
		rec.reads()
		list, total, err := ts.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if total != tc.total || len(list) != tc.rows {
			t.Errorf("%s: %d rows total %d, want %d total %d", tc.name, len(list), total, tc.rows, tc.total)
		}
		// The resolving statement, then the page and total when read.
		if got, want := len(rec.reads()), map[bool]int{false: 1, true: 3}[tc.pageRead]; got != want {
			t.Errorf("%s: List ran %d statements, want %d", tc.name, got, want)
		}
		n, err := ts.Count(ctx, f)
		if err != nil || n != tc.total {
			t.Errorf("%s: Count %d (%v), want %d", tc.name, n, err, tc.total)
		}
		if got := len(rec.reads()); got != 1 && f.ScanID == "" {
			t.Errorf("%s: Count ran %d statements, want 1", tc.name, got)
		}
	}
}

// TestPrefixComplement: a file prefix that most of the organization's
// paths start with is held as the paths that do not, and pages and totals
// are those of the findings whose file starts with it.
func TestPrefixComplement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := 3 * complementMin
	s, pool, sc := reportedScan(t, "p", n, func(i int, r *Reported) {
		r.AffectedFile, r.Verified = fmt.Sprintf("src/p%d.go", i), true
		if i%9 == 0 {
			r.AffectedFile = fmt.Sprintf("src%d.go", i) // shares the prefix's bytes, not the prefix
		}
	})
	m, err := matchKeys(ctx, pool, Filter{OrgID: sc.OrgID, FilePrefix: "src/"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.not != [3]bool{false, false, true} || len(m.file) != (n+8)/9 {
		t.Fatalf("paths not held as a complement: %v, %d keys", m.not, len(m.file))
	}
	for _, f := range []Filter{
		{SortBy: "found_at", Desc: true, Limit: 15, Offset: 15},
		{Severity: "high", SortBy: "severity", Limit: 5, Offset: 2},
		{ScanID: sc.ID, SortBy: "updated_at", Limit: 7, Offset: 30},
	} {
		f.OrgID, f.FilePrefix = sc.OrgID, "src/"
		var want []string
		if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(id::text ORDER BY `+f.orderBy("f")+`), '{}') FROM findings.findings f
			WHERE org_id = $1 AND starts_with(affected_file, 'src/') AND ($2 = '' OR severity = $2)`, sc.OrgID, f.Severity).Scan(&want); err != nil {
			t.Fatal(err)
		}
		ids, total := listIDs(t, s, f)
		page := want[min(f.Offset, len(want)):min(f.Offset+f.Limit, len(want))]
		if total != int64(len(want)) || !slices.Equal(ids, page) || len(page) == 0 {
			t.Errorf("%+v: %d rows total %d, want %d rows total %d", f, len(ids), total, len(page), len(want))
		}
	}
}

// TestKeyLookupPlan: in a search's snapshot, the key lookup runs with a
// generic plan from its first run (see genericPlans), and the snapshot's
// other statements with the server's own choice, which makes custom plans
// for a statement's first runs: the setting ends with the lookup.
func TestKeyLookupPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool, sc := reportedScan(t, "kp", 40, func(i int, r *Reported) {
		r.Verified, r.Description = true, fmt.Sprintf("Sink %d", i%4)
	})
	one := tracedPool(t, pool, nil, 1) // one connection: its prepared statements are the searches'
	s := &Store{Pool: one}
	for _, f := range []Filter{{Text: "sink"}, {FilePrefix: "src/"}} {
		f.OrgID, f.SortBy, f.Limit = sc.OrgID, "found_at", 5
		if _, _, err := s.List(ctx, f); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Count(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := one.Query(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement !~* '^(set|begin|commit|rollback)\M' AND statement NOT LIKE 'SELECT statement, generic_plans%'`)
	if err != nil {
		t.Fatal(err)
	}
	type plans struct {
		sql             string
		generic, custom int64
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (plans, error) {
		var p plans
		return p, r.Scan(&p.sql, &p.generic, &p.custom)
	})
	if err != nil {
		t.Fatal(err)
	}
	lookups := 0
	for _, p := range all {
		lookup := strings.HasPrefix(p.sql, "WITH m AS MATERIALIZED (SELECT x.field")
		switch {
		case lookup && (p.custom != 0 || p.generic == 0):
			t.Errorf("a key lookup ran %d custom and %d generic plans, want generic ones only: %.80s", p.custom, p.generic, p.sql)
		case !lookup && p.generic != 0:
			t.Errorf("a statement after the key lookup ran %d generic plans, want the server's custom first runs: %.80s", p.generic, p.sql)
		}
		if lookup {
			lookups++
		}
	}
	if lookups != 2 || len(all) < 4 {
		t.Fatalf("%d key lookups among %d statements, want 2 among the pages and totals", lookups, len(all))
	}
}
