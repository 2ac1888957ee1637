package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestCountersAfterUpgrade records tagged findings under the schema before
// a counter migration, then applies the rest: the counters it backfills
// (or rebuilds) agree with the findings and their distinct texts, and so
// do the totals they give.
func TestCountersAfterUpgrade(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, before string
		// drift, run before the upgrade, leaves a counter short, as a
		// report racing an earlier migration could.
		drift string
	}{
		// 0039 backfills the key search counters from the findings.
		{"key search counters", "0039", ""},
		// 0040 rebuilds the tag search counters that 0038's backfill
		// could have left short.
		{"tag search counters rebuilt", "0040",
			`DELETE FROM findings.finding_tag_search_counts WHERE tag = 'pci'`},
		// 0041 backfills the text counters from the distinct texts.
		{"text counters", "0041", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool := dbtest.New(t)
			require.NoError(t, db.Migrate(ctx, pool, Schema, migrationsBefore(t, tc.before)))
			s := &Store{Pool: pool}
			sc := newScan(t, s)
			var batch []Reported
			for i := range 30 {
				batch = append(batch, Reported{Fingerprint: fmt.Sprint(i), Title: []string{"SQL injection", "Reflected XSS"}[i%2],
					Description: "Rule R" + fmt.Sprint(i%3), AffectedFile: fmt.Sprintf("src/m%d/f.go", i%4),
					Category: []string{"injection", "xss", "ssrf"}[i%3], Severity: Severities[i%len(Severities)],
					Tags: []string{fmt.Sprintf("cwe-%d", i%2), "pci"}, Verified: true})
			}
			_, err := s.Report(ctx, sc, batch, true)
			require.NoError(t, err)
			if tc.drift != "" {
				_, err := pool.Exec(ctx, tc.drift)
				require.NoError(t, err)
			}
			require.NoError(t, Migrate(ctx, pool))
			require.Zero(t, outOfSync(t, pool), "counters out of step with the findings after the upgrade")
			repo := sc.repoKey()
			for _, c := range []struct {
				f    Filter
				want int64
			}{
				{Filter{Text: "sql", RepoKey: repo}, 15},
				{Filter{FilePrefix: "src/m1", Category: "xss"}, 3},
				{Filter{Tag: "pci", RepoKey: repo}, 30},
				{Filter{Tag: "pci", Category: "ssrf", Severity: "high"}, 2},
			} {
				f := c.f
				f.OrgID = sc.OrgID
				total, err := s.Count(ctx, f)
				require.NoError(t, err)
				require.Equal(t, c.want, total, "%+v", c.f)
			}
		})
	}
}
