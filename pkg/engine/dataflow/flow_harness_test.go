package dataflow_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/dataflow"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/sast"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// The source-level tests below run the front ends, the embedded models and
// the embedded flow rules over small programs, and compare the flow
// findings with the lines of the program marked "want:<rule id>" (in a
// comment). A case without marks is a safe variant: it must report nothing.

// newAnalyzer returns an analyzer of the embedded rules (compiled once per
// process by sast.New).
func newAnalyzer(t *testing.T) *sast.Analyzer {
	t.Helper()
	a, err := sast.New(sast.Limits{})
	require.NoError(t, err)
	return a
}

// src is one file of a test repository.
type src struct {
	path, code string
}

// flowCase is a repository and the findings it must produce.
type flowCase struct {
	name  string
	files []src
}

var wantMark = regexp.MustCompile(`want:([\w.\-]+)`)

// expected lists the "rule file:line" marks of the files, sorted.
func expected(files []src) []string {
	var out []string
	for _, f := range files {
		for i, line := range strings.Split(f.code, "\n") {
			for _, m := range wantMark.FindAllStringSubmatch(line, -1) {
				out = append(out, fmt.Sprintf("%s %s:%d", m[1], f.path, i+1))
			}
		}
	}
	sort.Strings(out)
	return out
}

// analyze prepares every file and runs the repository-wide flow analysis,
// returning its findings as sorted "rule file:line" strings.
func analyze(t *testing.T, files []src, props map[string]string) []string {
	t.Helper()
	a := newAnalyzer(t)
	w := a.NewWorker()
	defer w.Close()
	var irs []*ir.File
	for _, f := range files {
		p, err := w.Prepare(context.Background(), f.path, []byte(f.code))
		require.NoError(t, err, f.path)
		require.NotNil(t, p.IR, "%s has a front end", f.path)
		require.NoError(t, ir.ValidateFile(p.IR))
		irs = append(irs, p.IR)
	}
	fs, stats, err := a.Flow(context.Background(), irs, props, dataflow.Budget{})
	require.NoError(t, err)
	require.Zero(t, stats.Failed, "no function analysis failed")
	require.Zero(t, stats.OverBudget)
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		require.True(t, vocab.Categories.Contains(f.Category), "%s has a category of the findings contract: %q", f.RuleID, f.Category)
		require.True(t, vocab.Severity(f.Severity).Valid(), "%s severity %q", f.RuleID, f.Severity)
		if f.Evidence.Flow { // taint rules carry their path; constant and property rules have none
			require.NotNil(t, f.MermaidTrace, "%s carries its path", f.RuleID)
			require.NotEmpty(t, f.Path, "%s carries its steps", f.RuleID)
			require.Equal(t, f.StartLine, f.Path[len(f.Path)-1].Line, "%s: the path ends at the sink", f.RuleID)
		}
		out = append(out, fmt.Sprintf("%s %s:%d", f.RuleID, f.AffectedFile, f.StartLine))
	}
	sort.Strings(out)
	return out
}

func runFlowCases(t *testing.T, cases []flowCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := expected(tc.files)
			got := analyze(t, tc.files, nil)
			if len(want) == 0 {
				require.Empty(t, got, "safe variant")
				return
			}
			require.Equal(t, want, got)
		})
	}
}

// one is a repository of one file.
func one(path, code string) []src { return []src{{path, code}} }
