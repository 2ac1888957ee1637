package engine

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOWASPBenchmark scores the whole engine on the OWASP Benchmark for Java
// 1.2 the way the Benchmark's own scorecards do. It runs only when
// VULNSCAN_OWASP_BENCHMARK names the archive (.tar.gz) or an unpacked copy.
//
//	VULNSCAN_OWASP_MIN=<n>    fail when the overall score is below n
//	VULNSCAN_OWASP_VERBOSE=1  list the false negatives and false positives
//	VULNSCAN_OWASP_APPROVED=1 count only the findings automated verification
//	                          approves (what users see in auto mode)
//
// A test case is flagged when a finding tagged with the case's CWE lies in
// the case's own file (file base name = test name). That matching is
// scoring only; the engine itself knows nothing of the Benchmark.
func TestOWASPBenchmark(t *testing.T) {
	src := os.Getenv("VULNSCAN_OWASP_BENCHMARK")
	if src == "" {
		t.Skip("VULNSCAN_OWASP_BENCHMARK is not set: point it at owasp-benchmark-java-1.2.tar.gz or an unpacked copy")
	}
	dir := src
	fi, err := os.Stat(src)
	require.NoError(t, err, "benchmark path")
	if !fi.IsDir() {
		dir = t.TempDir()
		require.NoError(t, untarGz(src, dir), "unpack %s", src)
	}
	root, err := findBenchmarkRoot(dir)
	require.NoError(t, err)
	cases, err := readExpected(filepath.Join(root, "expectedresults-1.2.csv"))
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := New().Run(ctx, Input{Repos: []Repo{{URL: "bench", Dir: root, Primary: true}}}, nil)
	require.NoError(t, err)
	t.Logf("engine run: %d files, %d lines, %d findings in %s", res.Stats.FilesAnalyzed, res.Stats.LinesAnalyzed,
		len(res.Findings), time.Since(start).Round(time.Millisecond))

	// flagged[test name] holds the CWE numbers reported in the test's file.
	flagged := map[string]map[string]bool{}
	approvedOnly := os.Getenv("VULNSCAN_OWASP_APPROVED") == "1"
	for _, f := range res.Findings {
		if approvedOnly && !f.Confirmed {
			continue
		}
		name := strings.TrimSuffix(path.Base(f.AffectedFile), path.Ext(f.AffectedFile))
		for _, tag := range f.Tags {
			if cwe, ok := strings.CutPrefix(tag, "CWE-"); ok {
				if flagged[name] == nil {
					flagged[name] = map[string]bool{}
				}
				flagged[name][cwe] = true
			}
		}
	}
	sc := scoreBenchmark(cases, flagged)
	table := sc.table()
	fmt.Print(table)
	if os.Getenv("VULNSCAN_OWASP_VERBOSE") == "1" {
		fmt.Print(sc.misses())
	}
	if m := os.Getenv("VULNSCAN_OWASP_MIN"); m != "" {
		want, err := strconv.ParseFloat(m, 64)
		require.NoError(t, err, "VULNSCAN_OWASP_MIN")
		require.GreaterOrEqual(t, sc.overall(), want, "overall OWASP Benchmark score")
	}
}

// benchCase is one row of the answer key.
type benchCase struct {
	name, category, cwe string
	real                bool
}

// catScore is the confusion matrix of one category, with the names of the
// misclassified tests.
type catScore struct {
	tp, fn, tn, fp int
	fnNames        []string
	fpNames        []string
}

func (c *catScore) tpr() float64 { return ratio(c.tp, c.tp+c.fn) }
func (c *catScore) fpr() float64 { return ratio(c.fp, c.fp+c.tn) }
func (c *catScore) score() float64 {
	return 100 * (c.tpr() - c.fpr())
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

type benchScore map[string]*catScore

func scoreBenchmark(cases []benchCase, flagged map[string]map[string]bool) benchScore {
	sc := benchScore{}
	for _, c := range cases {
		cs := sc[c.category]
		if cs == nil {
			cs = &catScore{}
			sc[c.category] = cs
		}
		hit := flagged[c.name][c.cwe]
		switch {
		case c.real && hit:
			cs.tp++
		case c.real:
			cs.fn++
			cs.fnNames = append(cs.fnNames, c.name)
		case hit:
			cs.fp++
			cs.fpNames = append(cs.fpNames, c.name)
		default:
			cs.tn++
		}
	}
	return sc
}

func (sc benchScore) categories() []string {
	cats := make([]string, 0, len(sc))
	for k := range sc {
		cats = append(cats, k)
	}
	sort.Strings(cats)
	return cats
}

// overall is the average of the category scores, as the scorecards compute it.
func (sc benchScore) overall() float64 {
	if len(sc) == 0 {
		return 0
	}
	var sum float64
	for _, c := range sc {
		sum += c.score()
	}
	return sum / float64(len(sc))
}

func (sc benchScore) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %5s %5s %5s %5s %7s %7s %7s\n", "category", "TP", "FN", "TN", "FP", "TPR", "FPR", "score")
	var tp, fn, tn, fp int
	for _, k := range sc.categories() {
		c := sc[k]
		fmt.Fprintf(&b, "%-13s %5d %5d %5d %5d %7.3f %7.3f %7.1f\n", k, c.tp, c.fn, c.tn, c.fp, c.tpr(), c.fpr(), c.score())
		tp, fn, tn, fp = tp+c.tp, fn+c.fn, tn+c.tn, fp+c.fp
	}
	fmt.Fprintf(&b, "%-13s %5d %5d %5d %5d %7s %7s %7.1f\n", "overall", tp, fn, tn, fp, "", "", sc.overall())
	return b.String()
}

func (sc benchScore) misses() string {
	var b strings.Builder
	for _, k := range sc.categories() {
		c := sc[k]
		fmt.Fprintf(&b, "%s FN (%d): %s\n", k, len(c.fnNames), strings.Join(c.fnNames, " "))
		fmt.Fprintf(&b, "%s FP (%d): %s\n", k, len(c.fpNames), strings.Join(c.fpNames, " "))
	}
	return b.String()
}

// readExpected parses the answer key: test name, category, real
// vulnerability, CWE; lines starting with # are comments.
func readExpected(file string) ([]benchCase, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("answer key: %w", err)
	}
	defer func() { _ = f.Close() }()
	r := csv.NewReader(f)
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	var out []benchCase
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("answer key %s: %w", file, err)
		}
		if len(rec) < 4 {
			return nil, fmt.Errorf("answer key %s: short record %v", file, rec)
		}
		real, err := strconv.ParseBool(strings.TrimSpace(rec[2]))
		if err != nil {
			return nil, fmt.Errorf("answer key %s: %q: %w", file, rec[0], err)
		}
		out = append(out, benchCase{name: strings.TrimSpace(rec[0]), category: strings.TrimSpace(rec[1]),
			real: real, cwe: strings.TrimSpace(rec[3])})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("answer key %s: no test cases", file)
	}
	return out, nil
}

// findBenchmarkRoot returns the directory holding the answer key: dir
// itself or a directory below it.
func findBenchmarkRoot(dir string) (string, error) {
	root := ""
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "expectedresults-1.2.csv" {
			root = filepath.Dir(p)
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("find answer key under %s: %w", dir, err)
	}
	if root == "" {
		return "", fmt.Errorf("no expectedresults-1.2.csv under %s", dir)
	}
	return root, nil
}

// untarGz unpacks a .tar.gz archive into dst, refusing entries that would
// land outside it; only regular files and directories are created.
func untarGz(archive, dst string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	defer func() { _ = gz.Close() }()
	tr := tar.NewReader(gz)
	base := filepath.Clean(dst) + string(os.PathSeparator)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		target := filepath.Join(dst, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(target+string(os.PathSeparator), base) || filepath.IsAbs(h.Name) {
			return fmt.Errorf("tar entry %q escapes the destination", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, cerr := io.Copy(out, io.LimitReader(tr, h.Size))
			if err := out.Close(); cerr == nil {
				cerr = err
			}
			if cerr != nil {
				return fmt.Errorf("write %s: %w", h.Name, cerr)
			}
		}
	}
}

func TestUntarGzRejectsEscapingEntries(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "evil.tar.gz")
	f, err := os.Create(archive)
	require.NoError(t, err)
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	body := []byte("x")
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "../escape.txt", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
	_, err = tw.Write(body)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	require.NoError(t, f.Close())
	out := filepath.Join(dir, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	err = untarGz(archive, out)
	require.ErrorContains(t, err, "escapes")
	_, statErr := os.Stat(filepath.Join(dir, "escape.txt"))
	require.True(t, os.IsNotExist(statErr))
}

func TestScoreBenchmark(t *testing.T) {
	cases := []benchCase{
		{name: "T1", category: "sqli", cwe: "89", real: true},
		{name: "T2", category: "sqli", cwe: "89", real: true},
		{name: "T3", category: "sqli", cwe: "89", real: false},
		{name: "T4", category: "sqli", cwe: "89", real: false},
		{name: "T5", category: "xss", cwe: "79", real: true},
	}
	flagged := map[string]map[string]bool{
		"T1": {"89": true},
		"T3": {"89": true},
		"T5": {"89": true}, // wrong CWE: not a hit
	}
	sc := scoreBenchmark(cases, flagged)
	require.Equal(t, &catScore{tp: 1, fn: 1, tn: 1, fp: 1, fnNames: []string{"T2"}, fpNames: []string{"T3"}}, sc["sqli"])
	require.InDelta(t, 0.0, sc["sqli"].score(), 1e-9)
	require.Equal(t, 1, sc["xss"].fn)
	require.InDelta(t, 0.0, sc.overall(), 1e-9)
}
