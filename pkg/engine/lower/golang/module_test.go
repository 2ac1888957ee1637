package golang

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

func TestModulePath(t *testing.T) {
	t.Parallel()
	cases := []struct{ gomod, want string }{
		{"module example.com/app\n\ngo 1.22\n", "example.com/app"},
		{"// Shop backend\nmodule   github.com/acme/shop // main module\nrequire x v1\n", "github.com/acme/shop"},
		{"module \"example.com/quoted\"\n", "example.com/quoted"},
		{"go 1.21\nmodulex foo\n", ""},
		{"", ""},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, ModulePath([]byte(tc.gomod)), tc.gomod)
	}
}

// TestLowerModuleResolvesImports checks that with the module path, a call
// through an import of the repository's own package names the callee's
// qualified name.
func TestLowerModuleResolvesImports(t *testing.T) {
	t.Parallel()
	lower := func(path, src string) *ir.File {
		p := syntax.NewParser(syntax.Limits{})
		defer p.Close()
		root, _, err := p.Parse(context.Background(), syntax.Go, []byte(src))
		require.NoError(t, err)
		f, err := LowerModule("example.com/app", path, []byte(src), root)
		require.NoError(t, err)
		require.NoError(t, ir.ValidateFile(f))
		return f
	}
	callee := lower("internal/store/find.go", "package store\nfunc Find(name string) string { return name }\n")
	caller := lower("cmd/api/main.go", "package main\nimport \"example.com/app/internal/store\"\nfunc main() { store.Find(\"x\") }\n")
	var call *ir.Call
	for _, blk := range caller.Funcs[0].Blocks {
		for _, in := range blk.Instrs {
			if in.Op == ir.OpCall {
				call = in.Call
			}
		}
	}
	require.NotNil(t, call)
	require.Equal(t, ir.CallStatic, call.Kind)
	require.Equal(t, callee.Funcs[0].QName, call.Qual+"."+call.Name)
}
