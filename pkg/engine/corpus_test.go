package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/dataflow"
	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/engine/iac"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/sast"
)

// The labelled corpus: testdata/corpus/<language>/{vuln,safe}_* entries,
// each a file or a directory of files analysed as one repository. A line of
// a vulnerable entry carrying "vuln: <rule-id>" must be reported by that
// rule; "safe: <rule-id> …" declares that a safe entry holds the safe
// variant of those rules, and safe entries must produce no finding at all.
var (
	vulnMarker = regexp.MustCompile(`vuln: ([\w.-]+)`)
	safeMarker = regexp.MustCompile(`safe: ([\w.\- ]+)`)
)

type score struct{ expected, found, fp int }

func TestCorpus(t *testing.T) {
	an, err := sast.New(sast.Limits{})
	require.NoError(t, err)
	classOf := map[string]string{}
	for _, r := range an.Rules() {
		classOf[r.ID] = r.Class
	}
	w := an.NewWorker()
	defer w.Close()

	root := filepath.Join("testdata", "corpus")
	table := map[[2]string]*score{}
	get := func(lang, class string) *score {
		k := [2]string{lang, class}
		if table[k] == nil {
			table[k] = &score{}
		}
		return table[k]
	}
	hasVuln, hasSafe := map[string]bool{}, map[string]bool{}
	var failures []string
	langs, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, ld := range langs {
		if !ld.IsDir() {
			continue
		}
		lang := ld.Name()
		entries, err := os.ReadDir(filepath.Join(root, lang))
		require.NoError(t, err)
		for _, ent := range entries {
			// each top-level entry is one project, analysed alone
			project := filepath.Join(root, lang, ent.Name())
			got, sources := analyzeProject(t, an, w, root, project)
			for _, f := range got {
				if _, ok := classOf[f.RuleID]; !ok {
					classOf[f.RuleID] = strings.SplitN(f.RuleID, ".", 2)[0]
				}
			}
			kind := ent.Name()[:min(4, len(ent.Name()))]
			for rel, data := range sources {
				lines := strings.Split(string(data), "\n")
				switch kind {
				case "safe":
					for _, l := range lines {
						if m := safeMarker.FindStringSubmatch(l); m != nil {
							for _, id := range strings.Fields(m[1]) {
								hasSafe[id] = true
							}
						}
					}
				case "vuln":
					for i, l := range lines {
						m := vulnMarker.FindStringSubmatch(l)
						if m == nil {
							continue
						}
						id := m[1]
						hasVuln[id] = true
						cls, ok := classOf[id]
						if !ok {
							cls = strings.SplitN(id, ".", 2)[0]
							classOf[id] = cls
						}
						s := get(lang, cls)
						s.expected++
						hit := false
						for _, f := range got {
							if f.RuleID == id && f.AffectedFile == rel && f.StartLine <= i+1 && i+1 <= f.EndLine {
								hit = true
							}
						}
						if hit {
							s.found++
						} else {
							failures = append(failures, fmt.Sprintf("missed %s at %s:%d", id, rel, i+1))
						}
					}
				}
			}
			if kind == "safe" {
				for _, f := range got {
					get(lang, classOf[f.RuleID]).fp++
					failures = append(failures, fmt.Sprintf("false positive %s at %s:%d", f.RuleID, f.AffectedFile, f.StartLine))
				}
			}
		}
	}

	keys := make([][2]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-12s %-10s %8s %6s %7s %3s\n", "language", "class", "expected", "found", "recall", "fp")
	var te, tf, tfp int
	for _, k := range keys {
		s := table[k]
		recall := 1.0
		if s.expected > 0 {
			recall = float64(s.found) / float64(s.expected)
		}
		fmt.Fprintf(&b, "%-12s %-10s %8d %6d %7.2f %3d\n", k[0], k[1], s.expected, s.found, recall, s.fp)
		te, tf, tfp = te+s.expected, tf+s.found, tfp+s.fp
		if recall < 0.9 {
			t.Errorf("recall %.2f below 0.9 for %s/%s", recall, k[0], k[1])
		}
	}
	fmt.Fprintf(&b, "%-12s %-10s %8d %6d %7.2f %3d\n", "total", "", te, tf, float64(tf)/float64(max(te, 1)), tfp)
	t.Log(b.String())
	fmt.Print(b.String())
	for _, f := range failures {
		t.Log(f)
	}
	require.Zero(t, tfp, "findings on safe variants")

	// every code rule has at least one vulnerable and one safe variant
	for _, r := range an.Rules() {
		require.True(t, hasVuln[r.ID], "rule %s has no vulnerable variant in the corpus", r.ID)
		require.True(t, hasSafe[r.ID], "rule %s has no safe variant in the corpus", r.ID)
	}
	for id := range hasVuln {
		require.True(t, hasSafe[id], "rule %s has no safe variant in the corpus", id)
	}
}

// analyzeProject runs the code analyzers over one corpus entry (a file or a
// directory of files) as a repository of its own. It returns the findings
// and the sources by corpus-relative path.
func analyzeProject(t *testing.T, an *sast.Analyzer, w *sast.Worker, root, project string) ([]finding.Finding, map[string][]byte) {
	t.Helper()
	sources := map[string][]byte{}
	var out []finding.Finding
	var files []*ir.File
	props := dataflow.NewProperties()
	// a directory entry is a repository of its own: its files are analysed
	// under paths relative to it, as a scan sees them; findings and sources
	// are reported under corpus-relative paths
	base := filepath.Dir(project)
	if fi, err := os.Stat(project); err == nil && fi.IsDir() {
		base = project
	}
	prefix, _ := filepath.Rel(root, base)
	prefix = filepath.ToSlash(prefix)
	err := filepath.WalkDir(project, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sources[path.Join(prefix, rel)] = data
		switch {
		case sast.Language(rel) != "":
			prep, err := w.Prepare(context.Background(), rel, data)
			require.NoError(t, err, rel)
			out = append(out, prep.Findings...)
			if prep.IR != nil {
				files = append(files, prep.IR)
			}
		case dataflow.IsConfigFile(rel):
			props.Add(data)
		default:
			if kind := iac.Kind(rel, data); kind != "" {
				out = append(out, iac.Check(kind, rel, data)...)
			}
		}
		return nil
	})
	require.NoError(t, err)
	if len(files) > 0 {
		fs, _, err := an.Flow(context.Background(), files, props.Map(), dataflow.Budget{})
		require.NoError(t, err)
		out = append(out, fs...)
	}
	for i := range out {
		out[i].AffectedFile = path.Join(prefix, out[i].AffectedFile)
	}
	return out, sources
}
