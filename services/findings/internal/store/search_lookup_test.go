package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestHasTrigram: three ASCII letters or digits in a row, anywhere in q,
// let q's condition use the trigram indexes.
func TestHasTrigram(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"sql", true},
		{"SQL injection", true},
		{"a1b", true},
		{"pkg3/file107", true},
		{"x-sql", true},
		{"q", false},
		{"ab", false},
		{"a b c", false},
		{"%_\\", false},
		{"ab-cd", false},
		{"été", false}, // not ASCII: the server's locale decides whether it is a word
		{"", false},
	} {
		if got := hasTrigram(tc.q); got != tc.want {
			t.Errorf("hasTrigram(%q) = %t, want %t", tc.q, got, tc.want)
		}
		// Without a trigram, the condition is one no index serves: a
		// trigram index would read every entry it holds.
		want := "t.folded LIKE (SELECT lower($6))"
		if !tc.want {
			want = "(t.folded || '') LIKE (SELECT lower($6))"
		}
		if got := foldedLike("t", 6, tc.q); got != want {
			t.Errorf("foldedLike(%q) = %s, want %s", tc.q, got, want)
		}
	}
}

// TestKeyLookupReadsOnlyItsOrganization: q's key lookup, with the settings
// the store runs it with, reads only the organization's own texts and
// paths, with either plan, however many of other organizations' texts and
// paths match: a word in all of theirs, and a q too short for a trigram,
// which a trigram index would answer by reading every entry it holds.
// Another organization holds 20 times its texts: a generic plan, which
// takes an organization for half of the texts, would scan them whole.
//
// The rows read, index entries and table rows, are bounded by the
// organization's; for the short q, the trigram indexes are not used. (A
// word's trigrams list every organization's texts in the index, and a
// lookup reads part of those lists, compressed, a few entries per byte.)
func TestKeyLookupReadsOnlyItsOrganization(t *testing.T) {
	u := newUnit(t)
	sc := u.scan("https://git.example.com/acme/app")
	const reported = 30
	u.reportMany(sc, reported, func(i int) Reported {
		r := reportedFP(fmt.Sprintf("fp-%03d", i))
		r.Title = fmt.Sprintf("SQL injection in query %d", i)
		r.Description = fmt.Sprintf("A query built from request parameter p%d", i)
		r.AffectedFile = fmt.Sprintf("src/sql/q%d.go", i)
		r.Verified = true
		return r
	})
	// The organization's texts and paths of other findings (a tenth with
	// "sql"), and 20,000 texts and 20,000 paths of another organization,
	// each holding "sql" and "q".
	_, err := u.s.Pool.Exec(u.ctx, `
		INSERT INTO findings.search_texts (org_id, field, key, body)
			SELECT '`+u.org+`'::uuid, 'description', md5('m' || g)::uuid,
				CASE WHEN g % 10 = 0 THEN 'SQL injection' ELSE 'Cross-site scripting' END || ' in handler ' || g
			FROM generate_series(1, 1000) g;
		INSERT INTO findings.search_files (org_id, key, path)
			SELECT '`+u.org+`'::uuid, md5('mf' || g)::uuid, CASE WHEN g % 10 = 0 THEN 'src/sql/' ELSE 'src/web/' END || 'handler' || g || '.go'
			FROM generate_series(1, 1000) g;
		INSERT INTO findings.search_texts (org_id, field, key, body)
			SELECT md5('other')::uuid, 'description', md5('t' || g)::uuid,
				'Possible SQL injection: a query is built from parameter p' || g || ' without binding it'
			FROM generate_series(1, 20000) g;
		INSERT INTO findings.search_files (org_id, key, path)
			SELECT md5('other')::uuid, md5('f' || g)::uuid, 'src/sql/query' || g || '.go'
			FROM generate_series(1, 20000) g;
		ANALYZE findings.search_texts;
		ANALYZE findings.search_files`)
	require.NoError(t, err)
	ownTexts := u.count(`SELECT count(*) FROM findings.search_texts WHERE org_id = $1`, u.org)
	ownFiles := u.count(`SELECT count(*) FROM findings.search_files WHERE org_id = $1`, u.org)
	for _, q := range []string{"sql", "q"} {
		f := Filter{OrgID: u.org, Text: q}
		match, args := f.matchSQL(false)
		require.Len(t, args, 6)
		// The key lookup, and the key subqueries a condition on the keys
		// holds when they are not resolved first.
		for _, st := range []struct {
			name, types, sql string
			args             []any
		}{
			{"match", "uuid, text, text, uuid, boolean, text", match, args},
			{"texts", "uuid, text", textKeys(2, q), []any{u.org, f.textArg()}},
			{"paths", "uuid, text", fileTextKeys(2, q), []any{u.org, f.textArg()}},
		} {
			for _, mode := range planModes {
				t.Run(q+"/"+st.name+"/"+mode, func(t *testing.T) {
					p := u.prepareWith(t, []string{noSeqScans}, mode, "key_lookup_"+q+"_"+st.name, st.types, st.sql, st.args...)
					plan := p.Explain()
					// Each text or path is read at most twice: its index
					// entry and its row.
					assert.LessOrEqual(t, dbtest.RowsRead(plan, "search_texts", true), float64(2*ownTexts), "texts read (the organization has %d)", ownTexts)
					assert.LessOrEqual(t, dbtest.RowsRead(plan, "search_files", true), float64(2*ownFiles), "paths read (the organization has %d)", ownFiles)
					// The pattern is lowered once, not for every text or
					// path tested (see lowered).
					assert.Zero(t, dbtest.CondsWith(plan, "search_texts", "lower(")+dbtest.CondsWith(plan, "search_files", "lower("),
						"conditions lowering the pattern for each row")
					if !hasTrigram(q) {
						// LIKE (~~) as an index condition: the trigram index
						// asked for a pattern without trigrams.
						assert.Zero(t, dbtest.IndexCondsWith(plan, "search_texts", "~~")+dbtest.IndexCondsWith(plan, "search_files", "~~"),
							"trigram index scans for a q without trigrams")
					}
				})
			}
		}
		_, total, err := u.s.List(u.ctx, Filter{OrgID: u.org, Text: q, SortBy: "found_at", Limit: 15})
		require.NoError(t, err)
		assert.EqualValues(t, reported, total, "q=%s", q)
	}
}

// TestComplementReadsTextsOnce: for a q in every description, the key
// lookup finds that no description is left out from the primary key's
// entries alone, with either plan: no row is read again to test that it
// does not match (the statement before read every description a second
// time for that). The keys held are the empty complement.
func TestComplementReadsTextsOnce(t *testing.T) {
	u := newUnit(t)
	sc := u.scan("https://git.example.com/acme/app")
	const n = 3 * complementMin
	u.reportMany(sc, n, func(i int) Reported {
		r := reportedFP(fmt.Sprintf("fp-%03d", i))
		r.Description, r.Verified = fmt.Sprintf("A sink reached from parameter p%d", i), true
		return r
	})
	_, err := u.s.Pool.Exec(u.ctx, "ANALYZE findings.search_texts")
	require.NoError(t, err)
	f := Filter{OrgID: u.org, Text: "sink"}
	match, args := f.matchSQL(true)
	require.Len(t, args, 6)
	for _, mode := range planModes {
		t.Run(mode, func(t *testing.T) {
			p := u.prepareWith(t, []string{noSeqScans}, mode, "complement", "uuid, text, text, uuid, boolean, text", match, args...)
			// NOT LIKE, as EXPLAIN prints it: the test for a text that
			// does not match.
			assert.Zero(t, dbtest.RowsReadFiltered(p.Explain(), "search_texts", "!~~"), "text rows read to find those that do not match")
			m, err := matchKeys(u.ctx, u.s.Pool, f, true)
			require.NoError(t, err)
			assert.Equal(t, [3]bool{false, true, false}, m.not, "descriptions held as their complement")
			assert.Empty(t, m.description, "no description is left out")
			assert.EqualValues(t, n, m.hits)
		})
	}
}

// BenchmarkSearchTenants measures q's key lookup for one organization
// among 40, each holding 10,000 distinct texts and 10,000 paths (400,000 of
// each in all, inserted in turn as tenants' scans would add them, so that
// an organization's rows are spread over the tables): a word in a third of
// every organization's texts, a rare one, a q too short for a trigram, and
// a word of every path. The organization has no findings, so a search is
// its key lookup (with the counters it reads) in the search's snapshot.
func BenchmarkSearchTenants(b *testing.B) {
	ctx := context.Background()
	pool := dbtest.New(b)
	require.NoError(b, Migrate(ctx, pool))
	start := time.Now()
	_, err := pool.Exec(ctx, `
		INSERT INTO findings.search_texts (org_id, field, key, body)
			SELECT md5('org' || g % 40)::uuid, CASE WHEN g % 5 = 0 THEN 'title' ELSE 'description' END, md5('t' || g)::uuid,
				CASE WHEN g % 3 = 0 THEN 'Possible SQL injection: a query is built from ' ELSE 'Reflected cross-site scripting: a response writes ' END
				|| 'the request parameter p' || g % 977 || ' in handler ' || md5(g::text) || ' without encoding it; marker zq' || g % 40000 || 'x. '
				|| 'See the remediation guidance for the framework in use and validate the input against an allow list.'
			FROM generate_series(1, 400000) g;
		INSERT INTO findings.search_files (org_id, key, path)
			SELECT md5('org' || g % 40)::uuid, md5('f' || g)::uuid, 'src/svc' || g % 50 || '/pkg' || g % 7 || '/handler' || g || '.go'
			FROM generate_series(1, 400000) g`)
	require.NoError(b, err)
	for _, table := range []string{"search_texts", "search_files"} {
		_, err := pool.Exec(ctx, "VACUUM ANALYZE findings."+table)
		require.NoError(b, err)
	}
	b.Logf("seeded 400,000 texts and 400,000 paths of 40 organizations in %s", time.Since(start).Round(time.Millisecond))
	var org string
	require.NoError(b, pool.QueryRow(ctx, `SELECT md5('org7')::uuid::text`).Scan(&org))
	s := &Store{Pool: pool}
	for _, q := range []struct{ name, text string }{
		{"sql(a third of the texts)", "sql"},
		{"rare(10 texts)", "zq7x"},
		{"short(every text)", "q"},
		{"handler(every text and path)", "handler"},
	} {
		b.Run(q.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := s.List(ctx, Filter{OrgID: org, Text: q.text, SortBy: "found_at", Desc: true, Limit: 15}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWideKeysReadInOneRange: the key lookup reads the counters of a
// column's matching keys in one read of the column's counter rows when the
// keys are enough of its texts (see wideLookupRows), and a lookup per key
// when fewer or within a category, with either plan. The sums,
// per-severity sums and keys held equal what the findings say, with the
// spec's filters and within a category (whose counters are another
// table).
func TestWideKeysReadInOneRange(t *testing.T) {
	u := newUnit(t)
	ctx, pool := u.ctx, u.s.Pool
	// 1,100 findings, each with a description of its own: 400 with "sink"
	// (read in one range while a key has up to 5 counter rows), 66 with
	// "source" (looked up even at one row a key), the rest neither; a
	// quarter of the findings resolved, and a quarter in another category.
	const sinks, sources = 400, 66
	sc := u.scan("https://git.example.com/acme/app")
	batch := reported("w", 1100)
	u.reportMany(sc, len(batch), func(i int) Reported {
		r := batch[i]
		r.Verified, r.Description = true, fmt.Sprintf("Other %d", i)
		switch {
		case i%11 < 4:
			r.Description = fmt.Sprintf("Sink %d", i)
		case i%11 == 4 && i/11 < sources:
			r.Description = fmt.Sprintf("Source %d", i)
		}
		if i%4 == 0 {
			r.Category = "xss"
		}
		return r
	})
	_, err := pool.Exec(ctx, `UPDATE findings.findings SET state = 'resolved' WHERE org_id = $1 AND substr(fingerprint, 2)::int % 4 = 1`, u.org)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `ANALYZE findings.finding_key_counts; ANALYZE findings.finding_key_search_counts`)
	require.NoError(t, err)
	require.Equal(t, len(batch), u.count(`SELECT count(*) FROM findings.search_texts WHERE org_id = $1 AND field = 'description'`, u.org))
	statement := 0
	for _, tc := range []struct {
		q    string
		keys int
		wide bool
	}{{"SINK", sinks, true}, {"source", sources, false}} {
		for _, f := range []Filter{{}, {Severity: "high"}, {State: "resolved"}, {Severity: "low", State: "open"}, {Category: "xss"}, {Category: "xss", State: "open"}} {
			f.OrgID, f.Text = u.org, tc.q
			name := fmt.Sprintf("%s/sev=%s/state=%s/category=%s", tc.q, f.Severity, f.State, f.Category)
			t.Run(name, func(t *testing.T) {
				rows, err := pool.Query(ctx, `SELECT severity, state, description FROM findings.findings
					WHERE org_id = $1 AND verification_status = 'approved' AND description ILIKE $2 AND ($3 = '' OR category = $3)`,
					f.OrgID, f.textArg(), f.Category)
				require.NoError(t, err)
				var every, some int64
				sevs, live := make([]int64, len(Severities)), map[string]bool{}
				for rows.Next() {
					var sev, state, desc string
					require.NoError(t, rows.Scan(&sev, &state, &desc))
					every++
					if f.State == "" || state == f.State {
						sevs[slices.Index(Severities, sev)]++
						if f.Severity == "" || sev == f.Severity {
							some++
							live[desc] = true
						}
					}
				}
				require.NoError(t, rows.Err())
				require.NotZero(t, some, "empty fixture")
				m, err := matchKeys(ctx, pool, f, true)
				require.NoError(t, err)
				assert.Equal(t, [3]bool{}, m.not, "no complement")
				assert.Equal(t, [2]int64{every, some}, m.sums[1], "descriptions' findings, every and with the filter")
				assert.Equal(t, sevs, m.sumsBySeverity[1], "per severity")
				assert.Len(t, m.description, len(live), "keys held: those with findings of the filter")
				table, types := "finding_key_counts", "uuid, text, text, uuid, boolean, text"
				if f.Category != "" {
					table, types = "finding_key_search_counts", types+", text"
				}
				sql, args := f.matchSQL(true)
				for _, mode := range planModes {
					statement++
					p := u.prepareWith(t, []string{noSeqScans}, mode, fmt.Sprint("wide_", statement), types, sql, args...)
					loops := 0.0
					dbtest.EachNode(p.Explain(), func(node map[string]any) {
						if node["Relation Name"] == table {
							loops = max(loops, node["Actual Loops"].(float64))
						}
					})
					if tc.wide && f.Category == "" {
						// The sample's lookups, one per key, and one read.
						assert.EqualValues(t, wideSample, loops, "%s: the counters read in one range (%s)", mode, table)
					} else {
						assert.EqualValues(t, tc.keys, loops, "%s: the counters looked up per key (%s)", mode, table)
					}
				}
			})
		}
	}
}
