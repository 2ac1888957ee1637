package sast_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/sast"
)

func TestLanguageOfFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{"app/views.py", "python"},
		{"src/index.js", "javascript"},
		{"src/App.java", "java"},
		{"cmd/main.go", "go"},
		{"web/index.php", "php"},
		{"lib/task.rb", "ruby"},
		{"README.md", ""},
		{"Makefile", ""},
	} {
		require.Equal(t, tc.want, sast.Language(tc.file), tc.file)
	}
}
