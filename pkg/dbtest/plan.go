package dbtest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PlanModes are the two plans a prepared statement runs with: the one the
// server makes for any arguments, which it keeps once it costs no more
// than those made for the arguments of the first runs, and one made for
// the arguments given. A statement whose work must stay bounded is checked
// under both.
var PlanModes = []string{"force_generic_plan", "force_custom_plan"}

// Prepared is a statement prepared under one plan mode in a transaction
// that the test rolls back when it ends.
type Prepared struct {
	t    testing.TB
	ctx  context.Context
	tx   pgx.Tx
	exec string // EXECUTE with the arguments
}

// Prepare prepares query (with parameters of types, "uuid, text[]", or of
// the types the server infers when types is "") as name under plan mode,
// in a transaction of its own on pool that is rolled back when t ends
// (with the locks the statement took), after settings (SET LOCAL
// statements, as the code under test applies them). EXPLAIN EXECUTE takes
// no parameters, so args are written into the EXECUTE as literals: a
// []string or an []int64 as an array, a time in RFC 3339, anything else as
// fmt prints it.
func Prepare(t testing.TB, pool *pgxpool.Pool, settings []string, mode, name, types, query string, args ...any) *Prepared {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	for _, set := range append(settings, "SET LOCAL plan_cache_mode = "+mode) {
		if _, err := tx.Exec(ctx, set); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
	}
	// A prepared statement outlives the transaction, on its connection:
	// each mode prepares its own.
	name += "_" + mode
	if types != "" {
		types = "(" + types + ")"
	}
	if _, err := tx.Exec(ctx, "PREPARE "+name+types+" AS "+query); err != nil {
		t.Fatalf("prepare %s: %v", name, err)
	}
	lits := make([]string, len(args))
	for i, a := range args {
		v := fmt.Sprint(a)
		switch elems := a.(type) {
		case []string:
			quoted := make([]string, len(elems))
			for j, e := range elems {
				quoted[j] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e) + `"`
			}
			v = "{" + strings.Join(quoted, ",") + "}"
		case []pgtype.UUID:
			ids := make([]string, len(elems))
			for j, e := range elems {
				ids[j] = e.String()
			}
			v = "{" + strings.Join(ids, ",") + "}"
		case time.Time:
			v = elems.Format(time.RFC3339Nano)
		case []int64:
			nums := make([]string, len(elems))
			for j, e := range elems {
				nums[j] = strconv.FormatInt(e, 10)
			}
			v = "{" + strings.Join(nums, ",") + "}"
		}
		lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return &Prepared{t: t, ctx: ctx, tx: tx, exec: "EXECUTE " + name + "(" + strings.Join(lits, ", ") + ")"}
}

// Run executes the statement.
func (p *Prepared) Run() pgx.Rows {
	p.t.Helper()
	rows, err := p.tx.Query(p.ctx, p.exec)
	if err != nil {
		p.t.Fatalf("%s: %v", p.exec, err)
	}
	return rows
}

// Explain executes the statement under EXPLAIN ANALYZE and returns its
// plan's top node.
func (p *Prepared) Explain() map[string]any {
	p.t.Helper()
	rows, err := p.tx.Query(p.ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+p.exec)
	if err != nil {
		p.t.Fatalf("explain %s: %v", p.exec, err)
	}
	plans, err := pgx.CollectRows(rows, pgx.RowTo[[]map[string]any])
	if err != nil || len(plans) != 1 || len(plans[0]) != 1 {
		p.t.Fatalf("explain %s: %v plans, %v", p.exec, len(plans), err)
	}
	return plans[0][0]["Plan"].(map[string]any)
}

// EachNode calls fn on a plan's node and on each of its descendants.
func EachNode(node map[string]any, fn func(map[string]any)) {
	fn(node)
	children, _ := node["Plans"].([]any)
	for _, c := range children {
		EachNode(c.(map[string]any), fn)
	}
}

// NodeRowsRead is the rows a scan node read: those it returned and those
// its filter and its index recheck removed, over all its loops.
func NodeRowsRead(node map[string]any) float64 {
	loops, _ := node["Actual Loops"].(float64)
	kept, _ := node["Actual Rows"].(float64)
	removed, _ := node["Rows Removed by Filter"].(float64)
	recheck, _ := node["Rows Removed by Index Recheck"].(float64)
	return (kept + removed + recheck) * loops
}

// OfIndex reports whether node scans one of table's indexes (named
// table_…).
func OfIndex(node map[string]any, table string) bool {
	index, _ := node["Index Name"].(string)
	return strings.HasPrefix(index, table+"_")
}

// RowsRead sums the rows the scans of table in a plan read (NodeRowsRead):
// its heap's, and its index entries where an index-only scan read them;
// with bitmaps, also the entries the bitmap scans of table's indexes
// returned.
func RowsRead(plan map[string]any, table string, bitmaps bool) float64 {
	var n float64
	EachNode(plan, func(node map[string]any) {
		if node["Relation Name"] == table || bitmaps && node["Node Type"] == "Bitmap Index Scan" && OfIndex(node, table) {
			n += NodeRowsRead(node)
		}
	})
	return n
}

// RowsReadFiltered sums the rows read by the scans of table in a plan
// whose filter holds cond.
func RowsReadFiltered(plan map[string]any, table, cond string) float64 {
	var n float64
	EachNode(plan, func(node map[string]any) {
		if filter, _ := node["Filter"].(string); node["Relation Name"] == table && strings.Contains(filter, cond) {
			n += NodeRowsRead(node)
		}
	})
	return n
}

// IndexCondsWith counts the scans of table's indexes in a plan whose
// index condition holds cond.
func IndexCondsWith(plan map[string]any, table, cond string) int {
	n := 0
	EachNode(plan, func(node map[string]any) {
		if ic, _ := node["Index Cond"].(string); OfIndex(node, table) && strings.Contains(ic, cond) {
			n++
		}
	})
	return n
}

// CondsWith counts the conditions (filters, index conditions and their
// rechecks) of the scans of table and of its indexes in a plan that hold
// cond.
func CondsWith(plan map[string]any, table, cond string) int {
	n := 0
	EachNode(plan, func(node map[string]any) {
		if node["Relation Name"] != table && !OfIndex(node, table) {
			return
		}
		for _, k := range []string{"Filter", "Index Cond", "Recheck Cond"} {
			if c, _ := node[k].(string); strings.Contains(c, cond) {
				n++
			}
		}
	})
	return n
}
