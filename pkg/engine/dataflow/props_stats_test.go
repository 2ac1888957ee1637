package dataflow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/dataflow"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

func TestIsConfigFile(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"app.properties":                  true,
		"src/main/resources/x.PROPERTIES": true,
		"conf/settings.ini":               true,
		"setup.cfg":                       true,
		"prod.env":                        true,
		".env":                            true,
		"deploy/.env.production":          true,
		".envrc":                          true,
		"env.py":                          false,
		"app.yaml":                        false,
		"properties":                      false,
		"dir.ini/file.txt":                false,
		"":                                false,
	}
	for p, want := range cases {
		require.Equal(t, want, dataflow.IsConfigFile(p), p)
	}
}

func TestPropertiesParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data string
		want map[string]string
	}{
		{"equals and colon", "a=1\nb: 2\n", map[string]string{"a": "1", "b": "2"}},
		{"whitespace trimmed", "  key  =  value  \n", map[string]string{"key": "value"}},
		{"comments and sections skipped", "# c\n! c\n; c\n[section]\nk=v\n", map[string]string{"k": "v"}},
		{"export prefix", "export TOKEN=abc\n", map[string]string{"TOKEN": "abc"}},
		{"double quotes stripped", `k="quoted value"` + "\n", map[string]string{"k": "quoted value"}},
		{"single quotes stripped", "k='v'\n", map[string]string{"k": "v"}},
		{"unbalanced quote kept", `k="v` + "\n", map[string]string{"k": `"v`}},
		{"lone quote kept", `k="` + "\n", map[string]string{"k": `"`}},
		{"first separator splits", "url=http://x:8080/a=b\n", map[string]string{"url": "http://x:8080/a=b"}},
		{"empty value", "k=\n", map[string]string{"k": ""}},
		{"no key", "=v\n:v\n", map[string]string{}},
		{"no separator", "justtext\n", map[string]string{}},
		{"same value twice", "k=v\nk=v\n", map[string]string{"k": "v"}},
		{"conflicting values dropped", "k=v\nk=w\nj=1\n", map[string]string{"j": "1"}},
		{"conflict is final", "k=v\nk=w\nk=v\n", map[string]string{}},
		{"crlf lines", "a=1\r\nb=2\r\n", map[string]string{"a": "1", "b": "2"}},
		{"empty input", "", map[string]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := dataflow.NewProperties()
			p.Add([]byte(tc.data))
			require.Equal(t, tc.want, p.Map())
		})
	}
}

func TestPropertiesAcrossFiles(t *testing.T) {
	t.Parallel()
	p := dataflow.NewProperties()
	p.Add([]byte("alg=MD5\nshared=x\n"))
	p.Add([]byte("alg=SHA-256\nshared=x\nonly=here\n"))
	p.Add([]byte("alg=MD5\n"))
	require.Equal(t, map[string]string{"shared": "x", "only": "here"}, p.Map(),
		"a key with different values in different files is unknown, even if a third file agrees with the first")
}

func TestPropertiesLongLine(t *testing.T) {
	t.Parallel()
	long := make([]byte, 200<<10)
	for i := range long {
		long[i] = 'v'
	}
	p := dataflow.NewProperties()
	p.Add(append(append([]byte("k="), long...), "\nz=1\n"...))
	require.Len(t, p.Map()["k"], len(long))
	require.Equal(t, "1", p.Map()["z"])
}

func TestStatsAdd(t *testing.T) {
	t.Parallel()
	a := dataflow.Stats{Functions: 1, Summaries: 2, Rounds: 3, OverBudget: 4, NotAnalyzed: 5, Failed: 6, CallsResolved: 7, CallsToLibrary: 8}
	b := dataflow.Stats{Functions: 10, Summaries: 20, Rounds: 1, OverBudget: 40, NotAnalyzed: 50, Failed: 60, CallsResolved: 70, CallsToLibrary: 80}
	a.Add(b)
	require.Equal(t, dataflow.Stats{Functions: 11, Summaries: 22, Rounds: 3, OverBudget: 44, NotAnalyzed: 55, Failed: 66,
		CallsResolved: 77, CallsToLibrary: 88}, a)
	require.Equal(t, 3, a.Rounds, "rounds are the most any repository needed, not a sum")
	a.Add(dataflow.Stats{Rounds: 5})
	require.Equal(t, 5, a.Rounds)
	var z dataflow.Stats
	z.Add(dataflow.Stats{})
	require.Equal(t, dataflow.Stats{}, z)
}

func TestAnalyzeStatsCountCalls(t *testing.T) {
	t.Parallel()
	code := "import lib\ndef helper(v):\n    return v\ndef f():\n    lib.query(helper(lib.src()))  # want:sql\n"
	got, res := libFlow(t, code, nil)
	require.Equal(t, expected([]src{{"m.py", code}}), got)
	require.GreaterOrEqual(t, res.Stats.Functions, 2)
	require.Positive(t, res.Stats.CallsResolved, "helper is a repository function")
	require.GreaterOrEqual(t, res.Stats.CallsToLibrary, 2, "lib.src and lib.query are library calls")
	require.Zero(t, res.Stats.Failed)
	require.Zero(t, res.Stats.NotAnalyzed)
	require.GreaterOrEqual(t, res.Stats.Rounds, 1)
}

func TestAnalyzeNothing(t *testing.T) {
	t.Parallel()
	res, err := dataflow.Analyze(context.Background(), nil, dataflow.Config{})
	require.NoError(t, err)
	require.Empty(t, res.Findings)

	// A file of a language without models is analysed without findings.
	f := &ir.File{Path: "x.cob", Lang: "cobol"}
	b := ir.NewBuilder(f, "main", "main")
	b.Return(ir.None, ir.Pos{Line: 1})
	f.Funcs = []*ir.Func{b.Finish(ir.Pos{Line: 1})}
	res, err = dataflow.Analyze(context.Background(), []*ir.File{f}, dataflow.Config{})
	require.NoError(t, err)
	require.Empty(t, res.Findings)
	require.Equal(t, 1, res.Stats.Functions)
}

func TestAnalyzeCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &ir.File{Path: "x.py", Lang: "python"}
	b := ir.NewBuilder(f, "main", "main")
	b.Return(ir.None, ir.Pos{Line: 1})
	f.Funcs = []*ir.Func{b.Finish(ir.Pos{Line: 1})}
	res, err := dataflow.Analyze(ctx, []*ir.File{f}, dataflow.Config{})
	// A cancelled analysis either reports the context's error or stops
	// early without failing; it never reports findings it did not make.
	if err != nil {
		require.ErrorIs(t, err, context.Canceled)
		return
	}
	require.Empty(t, res.Findings)
}
