package service

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPRCredits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		full, lines int
		want        int
	}{
		{"nothing detected costs nothing", 0, 500, 0},
		{"a one-credit repository costs one either way", 1, 5000, 1},
		{"a small change costs one", 10, 10, 1},
		{"one credit per thousand changed lines beyond the first", 10, 2500, 3},
		{"always below the full scan", 3, 50_000, 2},
		{"no change still costs one", 5, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := PRCredits(tc.full, tc.lines)
			require.Equal(t, tc.want, got)
			if tc.full > 1 {
				require.Less(t, got, tc.full)
				require.GreaterOrEqual(t, got, 1)
			}
		})
	}
}
