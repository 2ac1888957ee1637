package exclude

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	m, err := Compile(Parse("exclude: docs/**\nexclude: *.gen.ts\nEXCLUDE: build\nnote: exclude: nothing\nexclude: /vendor/\nexclude: a?c"), DefaultLimits)
	require.NoError(t, err)
	tests := []struct {
		path string
		want bool
	}{
		{"docs/a/b.md", true},
		{"src/x.gen.ts", true},
		{"build/out.js", true},
		{"vendor/x/y.go", true},
		{"abc", true},
		{"a/c", false},
		{"x/docs/y", false},
		{"docs", false},
		{"héllo/abc", true},
		{"src/docs.py", false},
		{"src/app.ts", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, m.Match(tc.path), tc.path)
	}
	none, err := Compile(nil, DefaultLimits)
	require.NoError(t, err)
	require.False(t, none.Match("anything"))
}

// flood is the reported attack: two million characters of exclude lines.
func flood() string {
	var b strings.Builder
	for i := 0; b.Len() < 2_000_000; i++ {
		fmt.Fprintf(&b, "exclude: **/dir%d/**/*.x%d?\n", i, i)
	}
	return b.String()
}

func TestCheck(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxPatterns: 3, MaxBytes: 20}
	tests := []struct {
		name, text, wantErr string
	}{
		{"within", "exclude: a\nexclude: b/**", ""},
		{"too many", "exclude: a\nexclude: b\nexclude: c\nexclude: d", "has 4 exclude patterns; at most 3"},
		{"too long", "exclude: " + strings.Repeat("x", 21), "21 characters in total; at most 20"},
		{"flood", flood(), "at most 3 are allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Check(Parse(tt.text), lim)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestCompileBoundsFlood: even unchecked, a flood compiles to one matcher
// of at most the limits' patterns.
func TestCompileBoundsFlood(t *testing.T) {
	t.Parallel()
	pats := Parse(flood())
	require.Greater(t, len(pats), 50_000)
	m, err := Compile(pats, DefaultLimits)
	require.NoError(t, err)
	require.True(t, m.Match("a/dir0/b/c.x0z"))
	require.False(t, m.Match("a/dir199999/b/c.x199999z"), "patterns past the limit are not kept")
	require.Len(t, m.globs, DefaultLimits.MaxPatterns)
}

// BenchmarkMatch: matching one path against the most patterns allowed, as a
// ratio to matching it against a single pattern in the same run.
func BenchmarkMatch(b *testing.B) {
	var text strings.Builder
	for i := 0; text.Len() < DefaultLimits.MaxBytes-40; i++ {
		fmt.Fprintf(&text, "exclude: **/dir%d/**/*.x%d?\n", i, i)
	}
	full, err := Compile(Parse(text.String()), DefaultLimits)
	require.NoError(b, err)
	one, err := Compile([]string{"**/dir0/**/*.x0?"}, DefaultLimits)
	require.NoError(b, err)
	const p = "pkg/engine/lower/golang/expr_test_helpers.go"
	measure := func(m *Matcher) time.Duration {
		start := time.Now()
		for range 2000 {
			m.Match(p)
		}
		return time.Since(start)
	}
	var fullT, oneT time.Duration
	for b.Loop() {
		fullT += measure(full)
		oneT += measure(one)
	}
	b.ReportMetric(float64(fullT.Nanoseconds())/float64(b.N*2000), "ns/path-max-patterns")
	b.ReportMetric(float64(fullT)/float64(oneT), "x-one-pattern")
}
