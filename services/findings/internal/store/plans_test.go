package store

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// planModes are the two plans a prepared statement runs with: the one the
// server makes for any arguments, which it keeps once it costs no more
// than those made for the arguments of the first runs, and one made for
// the arguments given.
var planModes = []string{"force_generic_plan", "force_custom_plan"}

// preparedQuery is a statement prepared under one plan mode in a
// transaction that the test rolls back when it ends.
type preparedQuery struct {
	t    *testing.T
	ctx  context.Context
	tx   pgx.Tx
	exec string // EXECUTE with the arguments
}

// prepare prepares query (with parameters of types, "uuid, text[]") as
// name under plan mode, in a transaction of its own that is rolled back
// when t ends (with the locks the statement took). EXPLAIN EXECUTE takes
// no parameters, so args are written into the EXECUTE as literals.
func (u *unit) prepare(t *testing.T, mode, name, types, query string, args ...string) *preparedQuery {
	t.Helper()
	return u.prepareWith(t, nil, mode, name, types, query, args...)
}

// prepareWith is prepare with settings (SET LOCAL statements) applied
// before the statement is prepared, as the store applies them.
func (u *unit) prepareWith(t *testing.T, settings []string, mode, name, types, query string, args ...string) *preparedQuery {
	t.Helper()
	tx, err := u.s.Pool.Begin(u.ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(u.ctx) })
	for _, set := range append(settings, "SET LOCAL plan_cache_mode = "+mode) {
		_, err = tx.Exec(u.ctx, set)
		require.NoError(t, err)
	}
	// A prepared statement outlives the transaction, on its connection:
	// each mode prepares its own.
	name += "_" + mode
	_, err = tx.Exec(u.ctx, "PREPARE "+name+"("+types+") AS "+query)
	require.NoError(t, err)
	lits := make([]string, len(args))
	for i, a := range args {
		lits[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'"
	}
	return &preparedQuery{t: t, ctx: u.ctx, tx: tx, exec: "EXECUTE " + name + "(" + strings.Join(lits, ", ") + ")"}
}

// run executes the statement.
func (p *preparedQuery) run() pgx.Rows {
	p.t.Helper()
	rows, err := p.tx.Query(p.ctx, p.exec)
	require.NoError(p.t, err)
	return rows
}

// findingsRead executes the statement under EXPLAIN ANALYZE and returns
// the rows its scans of the findings table read: those they returned and
// those their filters removed.
func (p *preparedQuery) findingsRead() float64 {
	p.t.Helper()
	return rowsRead(p.explain(), "findings", false)
}

// explain executes the statement under EXPLAIN ANALYZE and returns its
// plan's top node.
func (p *preparedQuery) explain() map[string]any {
	p.t.Helper()
	rows, err := p.tx.Query(p.ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+p.exec)
	require.NoError(p.t, err)
	plans, err := pgx.CollectRows(rows, pgx.RowTo[[]map[string]any])
	require.NoError(p.t, err)
	require.Len(p.t, plans, 1)
	return plans[0][0]["Plan"].(map[string]any)
}

// eachNode calls fn on a plan's node and on each of its descendants.
func eachNode(node map[string]any, fn func(map[string]any)) {
	fn(node)
	children, _ := node["Plans"].([]any)
	for _, c := range children {
		eachNode(c.(map[string]any), fn)
	}
}

// nodeRowsRead is the rows a scan node read: those it returned and those
// its filter and its index recheck removed, over all its loops.
func nodeRowsRead(node map[string]any) float64 {
	loops, _ := node["Actual Loops"].(float64)
	kept, _ := node["Actual Rows"].(float64)
	removed, _ := node["Rows Removed by Filter"].(float64)
	recheck, _ := node["Rows Removed by Index Recheck"].(float64)
	return (kept + removed + recheck) * loops
}

// ofIndex reports whether node scans one of table's indexes (named
// table_…).
func ofIndex(node map[string]any, table string) bool {
	index, _ := node["Index Name"].(string)
	return strings.HasPrefix(index, table+"_")
}

// rowsRead sums the rows the scans of table in a plan read (nodeRowsRead);
// with bitmaps, also the entries the bitmap scans of table's indexes
// returned.
func rowsRead(plan map[string]any, table string, bitmaps bool) float64 {
	var n float64
	eachNode(plan, func(node map[string]any) {
		if node["Relation Name"] == table || bitmaps && node["Node Type"] == "Bitmap Index Scan" && ofIndex(node, table) {
			n += nodeRowsRead(node)
		}
	})
	return n
}

// rowsReadFiltered sums the rows read by the scans of table in a plan
// whose filter holds cond.
func rowsReadFiltered(plan map[string]any, table, cond string) float64 {
	var n float64
	eachNode(plan, func(node map[string]any) {
		if filter, _ := node["Filter"].(string); node["Relation Name"] == table && strings.Contains(filter, cond) {
			n += nodeRowsRead(node)
		}
	})
	return n
}

// indexCondsWith counts the scans of table's indexes in a plan whose
// index condition holds cond.
func indexCondsWith(plan map[string]any, table, cond string) int {
	n := 0
	eachNode(plan, func(node map[string]any) {
		if ic, _ := node["Index Cond"].(string); ofIndex(node, table) && strings.Contains(ic, cond) {
			n++
		}
	})
	return n
}
