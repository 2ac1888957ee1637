package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in  string
		multiline bool
		want      string
	}{
		{"plain", "db.Query(\"SELECT \" + id)", false, "db.Query(\"SELECT \" + id)"},
		{"Unicode is kept", "répertoire ✓ 日本 \uFFFD", false, "répertoire ✓ 日本 \uFFFD"},
		{"a block keeps its lines and tabs", "a\n\tb", true, "a\n\tb"},
		{"a field escapes them", "a\n\tb", false, `a\n\tb`},
		{"a colour", "\x1b[31mred\x1b[0m", true, `\x1b[31mred\x1b[0m`},
		{"the clipboard", "\x1b]52;c;ZXZpbA==\x07", false, `\x1b]52;c;ZXZpbA==\x07`},
		{"a carriage return hides what came before", "rm -rf /\rls", true, `rm -rf /\rls`},
		{"DEL and C1 controls", "a\x7fb\u009bc", false, `a\x7fb\x9bc`},
		{"bidirectional overrides", "if admin \u202e} \u2066{\u2069", false, `if admin \u202e} \u2066{\u2069`},
		{"bytes that are not UTF-8", "caf\xe9", false, `caf\xe9`},
		{"NUL", "a\x00b", true, `a\x00b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, shown(tc.in, tc.multiline))
		})
	}
}

// TestFindingsShowEscapesTerminalControls: a finding whose title, file,
// snippet, description and triage thread carry terminal escape sequences
// and reordering controls prints them as escapes; the JSON output carries
// them as they are.
func TestFindingsShowEscapesTerminalControls(t *testing.T) {
	t.Parallel()
	hostile := map[string]any{"id": "f1", "title": "SQL injection\x1b[2J", "severity": "high", "state": "open", "category": "injection",
		"affected_file": "app/\x1b]0;pwned\x07db.go", "line": 42, "occurrence_count": 1, "found_at": "2026-01-02T03:04:05Z",
		"description": "Query built\rfrom input.", "affected_code": "if admin \u202e} \u2066{\u2069\n\tquery(x)",
		"triage_thread": []any{map[string]any{"id": "c1", "comment": "see \x1b]52;c;ZXZpbA==\x07", "username": "ev\x1b[8mil", "source": "integration", "timestamp": "2026-01-03T00:00:00Z"}}}
	f := &fakeAPI{findings: []map[string]any{hostile}, finding: hostile}
	srv := newFake(t, f)
	code, out, errOut := runCLI(t, srv, testKey, "findings", "show", "f1")
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\r")
	require.NotContains(t, out, "\u202e")
	for _, s := range []string{`SQL injection\x1b[2J`, `app/\x1b]0;pwned\x07db.go:42`, `Query built\rfrom input.`, "if admin \\u202e} \\u2066{\\u2069\n\tquery(x)",
		`ev\x1b[8mil (integration): see \x1b]52;c;ZXZpbA==\x07`} {
		require.Contains(t, out, s)
	}
	code, out, errOut = runCLI(t, srv, testKey, "findings", "list")
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, `SQL injection\x1b[2J`)

	code, out, _ = runCLI(t, srv, testKey, "findings", "show", "f1", "--json")
	require.Equal(t, exitOK, code)
	require.True(t, strings.Contains(out, `\u001b[2J`), "JSON escapes it its own way: %s", out)
}
