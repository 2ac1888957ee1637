package prdiff

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func keys(ls Lines) []int {
	out := []int{}
	for k := range ls {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func TestDiff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		base, head string
		want       []int
	}{
		{"same", "a\nb\nc", "a\nb\nc", []int{}},
		{"appended", "a\nb", "a\nb\nc\nd", []int{3, 4}},
		{"inserted in the middle", "a\nb\nc", "a\nx\nb\nc", []int{2}},
		{"modified", "a\nb\nc", "a\nB\nc", []int{2}},
		{"deleted only", "a\nb\nc", "a\nc", []int{}},
		{"prepended", "b\nc", "a\nb\nc", []int{1}},
		{"moved lines keep the common ones", "a\nb\nc\nd", "c\nd\na\nb", []int{3, 4}},
		{"new file", "", "a\nb", []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, keys(Diff(split([]byte(tc.base)), split([]byte(tc.head)))))
		})
	}
}

func TestDiffLargeMiddleCountsAsChanged(t *testing.T) {
	t.Parallel()
	n := 2100 // 2100² line pairs exceed MaxCells
	base, head := make([]string, n), make([]string, n)
	for i := range base {
		base[i], head[i] = "b"+strings.Repeat("x", i%7), "h"+strings.Repeat("y", i%5)
	}
	require.Len(t, Diff(base, head), n)
}

func TestCompare(t *testing.T) {
	t.Parallel()
	base, head := t.TempDir(), t.TempDir()
	write := func(dir, name, content string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	write(base, "same.py", "x = 1\n")
	write(head, "same.py", "x = 1\n")
	write(base, "app/mod.py", "a\nb\nc\n")
	write(head, "app/mod.py", "a\nb\nnew\nc\n")
	write(head, "added.py", "one\ntwo\n")
	write(base, "removed.py", "gone\n")
	write(base, "big.txt", strings.Repeat("z\n", 50))
	write(head, "big.txt", strings.Repeat("z\n", 49)+"w\n")

	ch, err := Compare(context.Background(), base, head, 64)
	require.NoError(t, err)
	require.Len(t, ch, 3)
	require.Equal(t, []int{3}, keys(ch["app/mod.py"]))
	require.Equal(t, []int{1, 2}, keys(ch["added.py"]))
	require.Len(t, ch["big.txt"], 50, "a file over the size bound counts as changed whole")
	require.True(t, ch.TouchesRange("app/mod.py", 2, 4))
	require.False(t, ch.TouchesRange("app/mod.py", 1, 2))
	require.False(t, ch.Touches("same.py", 1))
}
