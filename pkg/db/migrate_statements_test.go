package db

import (
	"slices"
	"testing"
)

// TestStatements splits a migration that runs without a transaction at
// semicolons that end a line, dropping comments and blank lines between
// statements and keeping a statement's own lines.
func TestStatements(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"one", "-- migrate: without transaction\nCREATE INDEX CONCURRENTLY a ON t (x);\n", []string{"CREATE INDEX CONCURRENTLY a ON t (x);"}},
		{"several lines and comments", "-- migrate: without transaction\n-- why\n\nCREATE INDEX CONCURRENTLY a\n    ON t (x) WHERE y = ';';\n\n-- next\nCREATE INDEX CONCURRENTLY b ON t (y);",
			[]string{"CREATE INDEX CONCURRENTLY a\n    ON t (x) WHERE y = ';';", "CREATE INDEX CONCURRENTLY b ON t (y);"}},
		{"no final semicolon", "CREATE INDEX a ON t (x)", []string{"CREATE INDEX a ON t (x)"}},
		{"nothing", "-- migrate: without transaction\n\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statements(tc.body); !slices.Equal(got, tc.want) {
				t.Fatalf("%q, want %q", got, tc.want)
			}
		})
	}
}
