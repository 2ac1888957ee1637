package engine

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRealWorldTable recomputes the real-world precision table of the
// README from testdata/realworld/labels.tsv, the labelled approved findings
// of scans of mature open-source projects, and checks the labels file.
func TestRealWorldTable(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "realworld", "labels.tsv"))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	type row struct {
		lang                          string
		lines                         int
		approved, real, debatable, fp int
	}
	rows := map[string]*row{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		require.Len(t, cols, 8, line)
		lines, err := strconv.Atoi(cols[3])
		require.NoError(t, err, line)
		r := rows[cols[0]]
		if r == nil {
			r = &row{lang: cols[1], lines: lines}
			rows[cols[0]] = r
		}
		switch cols[6] {
		case "-":
			continue
		case "true":
			r.real++
		case "debatable":
			r.debatable++
		case "false":
			r.fp++
		default:
			t.Fatalf("unknown label %q in %s", cols[6], line)
		}
		require.NotEmpty(t, cols[7], "every label says why: %s", line)
		r.approved++
	}
	require.NoError(t, sc.Err())
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "| project | language | lines | approved | true | debatable | false |\n|---|---|---|---|---|---|---|\n")
	var tot row
	langs := map[string]bool{}
	for _, n := range names {
		r := rows[n]
		langs[r.lang] = true
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d |\n", n, r.lang, r.lines, r.approved, r.real, r.debatable, r.fp)
		tot.lines += r.lines
		tot.approved += r.approved
		tot.real += r.real
		tot.debatable += r.debatable
		tot.fp += r.fp
	}
	fmt.Fprintf(&b, "| total | %d languages | %d | %d | %d | %d | %d |\n", len(langs), tot.lines, tot.approved, tot.real, tot.debatable, tot.fp)
	t.Log("\n" + b.String())
	require.GreaterOrEqual(t, len(rows), 6, "at least six projects")
	require.Len(t, langs, 6, "projects in the six languages")
	if tot.approved > 0 {
		t.Logf("true or debatable: %.0f%%, false positives per 20,000 lines: %.2f",
			100*float64(tot.real+tot.debatable)/float64(tot.approved), 20000*float64(tot.fp)/float64(tot.lines))
	}
}
