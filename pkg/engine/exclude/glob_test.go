package exclude_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/exclude"
)

func TestParseLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"exclude: a", []string{"a"}},
		{"  Exclude :  /docs/  ", []string{"docs"}},
		{"exclude:///", nil},
		{"exclude:", nil},
		{"exclude a", nil},
		{"excludes: a", nil},
		{"# exclude: a", nil},
		{"exclude: a:b", []string{"a:b"}},
		{"exclude: a\r\nexclude: b\r\n", []string{"a", "b"}},
		{"intro text\nexclude: x/**\nmore text\nEXCLUDE: *.min.js", []string{"x/**", "*.min.js"}},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, exclude.Parse(tc.text), "%q", tc.text)
	}
}

func TestMatchGlobs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern string
		yes     []string
		no      []string
	}{
		{"*.min.js", []string{"a.min.js", "web/static/app.min.js"}, []string{"a.min.jsx", "min.js/x.ts"}},
		{"testdata", []string{"testdata/a.go", "testdata", "pkg/testdata"}, []string{"pkg/testdata2/a.go", "testdatax"}},
		{"pkg/testdata", []string{"pkg/testdata/a.go"}, []string{"x/pkg/testdata/a.go"}},
		{"**/fixtures/**", []string{"fixtures/a", "a/b/fixtures/c/d"}, []string{"fixturesx/a", "a/fixture/b"}},
		{"**", []string{"a", "a/b/c"}, nil},
		{"src/*/gen", []string{"src/a/gen/x.go"}, []string{"src/a/b/gen/x.go", "src/gen/x.go"}},
		{"src/**/gen", []string{"src/gen/x.go", "src/a/b/gen/x.go"}, []string{"src/a/b/genx/x.go"}},
		{"a?c.py", []string{"abc.py", "d/a_c.py"}, []string{"ac.py", "a/c.py", "abbc.py"}},
		{"*_test.go", []string{"x_test.go", "a/b/y_test.go"}, []string{"x_test.go.bak", "test.go"}},
		{"**/*.pb.go", []string{"a.pb.go", "api/v1/x.pb.go"}, []string{"a.pb.gox"}},
		{"docs/*.md", []string{"docs/a.md"}, []string{"docs/a/b.md", "x/docs/a.md"}},
		{"ü/*", []string{"ü/a"}, []string{"u/a"}},
	}
	for _, tc := range cases {
		m, err := exclude.Compile([]string{tc.pattern}, exclude.DefaultLimits)
		require.NoError(t, err)
		for _, p := range tc.yes {
			require.True(t, m.Match(p), "%s should match %s", tc.pattern, p)
		}
		for _, p := range tc.no {
			require.False(t, m.Match(p), "%s should not match %s", tc.pattern, p)
		}
	}
}

func TestMatchAnyOfSeveralPatterns(t *testing.T) {
	t.Parallel()
	m, err := exclude.Compile([]string{"vendor", "*.gen.go", "docs/**"}, exclude.DefaultLimits)
	require.NoError(t, err)
	for p, want := range map[string]bool{
		"vendor/a.go": true, "x/y.gen.go": true, "docs/a/b": true, "main.go": false, "vendors/a.go": false,
	} {
		require.Equal(t, want, m.Match(p), p)
	}
}

func TestNilMatcherMatchesNothing(t *testing.T) {
	t.Parallel()
	var m *exclude.Matcher
	require.False(t, m.Match("a"))
	empty, err := exclude.Compile(nil, exclude.DefaultLimits)
	require.NoError(t, err)
	require.False(t, empty.Match(""))
	require.False(t, empty.Match("a/b"))
}

func TestCompileKeepsPatternsWithinLimits(t *testing.T) {
	t.Parallel()
	lim := exclude.Limits{MaxPatterns: 2, MaxBytes: 10}
	m, err := exclude.Compile([]string{"a", "b", "c"}, lim)
	require.NoError(t, err)
	require.True(t, m.Match("a"))
	require.True(t, m.Match("b"))
	require.False(t, m.Match("c"), "the third pattern is over the count")

	m, err = exclude.Compile([]string{"abcdef", "ghijkl", "m"}, exclude.Limits{MaxPatterns: 10, MaxBytes: 10})
	require.NoError(t, err)
	require.True(t, m.Match("abcdef"))
	require.False(t, m.Match("ghijkl"), "the second pattern is over the length")
	require.False(t, m.Match("m"), "patterns after the first one over the limit are dropped")
}

func TestCheckLimits(t *testing.T) {
	t.Parallel()
	lim := exclude.Limits{MaxPatterns: 2, MaxBytes: 5}
	require.NoError(t, exclude.Check(nil, lim))
	require.NoError(t, exclude.Check([]string{"ab", "cde"}, lim))
	require.ErrorContains(t, exclude.Check([]string{"a", "b", "c"}, lim), "has 3 exclude patterns; at most 2")
	require.ErrorContains(t, exclude.Check([]string{"abc", "def"}, lim), "6 characters in total; at most 5")
	require.NoError(t, exclude.Check(exclude.Parse(strings.Repeat("exclude: x\n", 50)), exclude.DefaultLimits))
	require.Error(t, exclude.Check(exclude.Parse(strings.Repeat("exclude: x\n", 51)), exclude.DefaultLimits))
}
