package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPhaseBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		left        time.Duration
		hasDeadline bool
		total, want time.Duration
	}{
		{"no deadline: the budget", 0, false, 10 * time.Minute, 10 * time.Minute},
		{"plenty of time: the budget", 30 * time.Minute, true, 10 * time.Minute, 10 * time.Minute},
		{"little time: half of it", 8 * time.Minute, true, 10 * time.Minute, 4 * time.Minute},
		{"deadline passed: nothing", -time.Second, true, 10 * time.Minute, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, PhaseBudget(tt.left, tt.hasDeadline, tt.total))
		})
	}
}

// TestTargetBudget: 20 slow targets at the default 2 minutes each would take
// 40 minutes, past a 30-minute attempt; shared out they fit the phase.
func TestTargetBudget(t *testing.T) {
	t.Parallel()
	phase := PhaseBudget(30*time.Minute, true, 10*time.Minute)
	var used time.Duration
	for left := 20; left > 0; left-- {
		b := TargetBudget(phase-used, left, DefaultLimits.Timeout)
		require.LessOrEqual(t, b, DefaultLimits.Timeout)
		used += b // every target uses its whole budget
	}
	require.LessOrEqual(t, used, phase)
	require.Equal(t, 30*time.Second, TargetBudget(10*time.Minute, 20, DefaultLimits.Timeout))
	require.Equal(t, DefaultLimits.Timeout, TargetBudget(10*time.Minute, 1, DefaultLimits.Timeout))
	require.Zero(t, TargetBudget(-time.Second, 3, DefaultLimits.Timeout))
}
