package gctune

import (
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    map[string]string
		before int
		want   int
	}{
		{"unset", map[string]string{}, 100, DefaultPercent},
		{"empty", map[string]string{"GOGC": " "}, 100, DefaultPercent},
		{"set by the operator", map[string]string{"GOGC": "150"}, 150, 150},
		{"collection off", map[string]string{"GOGC": "off"}, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := debug.SetGCPercent(tc.before)
			defer debug.SetGCPercent(prev)
			got := Apply(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if got != tc.want {
				t.Fatalf("Apply = %d, want %d", got, tc.want)
			}
			if now := debug.SetGCPercent(tc.before); now != tc.want {
				t.Fatalf("GC percent in effect = %d, want %d", now, tc.want)
			}
		})
	}
}
