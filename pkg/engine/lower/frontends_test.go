package lower_test

// The tests of this package check what each front end makes of language
// constructs, through the lowered IR's dump: literal values, operators,
// declarations and the control flow of statements.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/golang"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/java"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/javascript"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/php"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/python"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/ruby"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// frontEnd is a grammar and the front end that lowers its trees.
type frontEnd struct {
	lang  *syntax.Lang
	lower lowertest.LowerFunc
}

var (
	goFE     = frontEnd{syntax.Go, golang.Lower}
	javaFE   = frontEnd{syntax.Java, java.Lower}
	jsFE     = frontEnd{syntax.JavaScript, javascript.Lower}
	tsFE     = frontEnd{syntax.TypeScript, javascript.Lower}
	tsxFE    = frontEnd{syntax.TSX, javascript.Lower}
	phpFE    = frontEnd{syntax.PHP, php.Lower}
	pythonFE = frontEnd{syntax.Python, python.Lower}
	rubyFE   = frontEnd{syntax.Ruby, ruby.Lower}
)

// file lowers src as the file at path (the IR must validate).
func (fe frontEnd) file(t *testing.T, path, src string) *ir.File {
	t.Helper()
	return lowertest.Lower(t, fe.lang, fe.lower, path, []byte(src))
}

// requireDump lowers src and requires each fragment (a line or a run of
// lines) in the dump of its IR.
func (fe frontEnd) requireDump(t *testing.T, path, src string, want ...string) {
	t.Helper()
	dump := ir.Dump(fe.file(t, path, src))
	for _, w := range want {
		require.Contains(t, dump, w, dump)
	}
}

// dumpCase is a small file and the fragments its dump must contain.
type dumpCase struct {
	name, src string
	want      []string
}

// run checks every case as a file at path.
func (fe frontEnd) run(t *testing.T, path string, cases []dumpCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fe.requireDump(t, path, tc.src, tc.want...)
		})
	}
}
