package syntax_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

func TestLangFor(t *testing.T) {
	t.Parallel()
	cases := map[string]*syntax.Lang{
		"a.py": syntax.Python, "A.PY": syntax.Python,
		"a.js": syntax.JavaScript, "a.jsx": syntax.JavaScript, "a.mjs": syntax.JavaScript, "a.cjs": syntax.JavaScript,
		"a.ts": syntax.TypeScript, "a.mts": syntax.TypeScript, "a.cts": syntax.TypeScript, "a.tsx": syntax.TSX,
		"a.go": syntax.Go, "A.java": syntax.Java, "a.php": syntax.PHP, "a.phtml": syntax.PHP, "a.rb": syntax.Ruby,
		"dir.py/x": nil, "a.pyc": nil, "Makefile": nil, "": nil, "a.d.ts.map": nil,
	}
	for file, want := range cases {
		require.Equal(t, want, syntax.LangFor(file), file)
	}
	require.Equal(t, "typescript", syntax.TSX.Name, "TSX files are TypeScript")
}

func parse(t *testing.T, l *syntax.Lang, src string) *syntax.Node {
	t.Helper()
	p := syntax.NewParser(syntax.Limits{})
	t.Cleanup(p.Close)
	root, n, err := p.Parse(context.Background(), l, []byte(src))
	require.NoError(t, err)
	require.Positive(t, n)
	return root
}

// visit calls fn on n and every node below it, parents first.
func visit(n *syntax.Node, fn func(*syntax.Node)) {
	fn(n)
	for _, c := range n.Children {
		visit(c, fn)
	}
}

func TestNodeHelpers(t *testing.T) {
	t.Parallel()
	src := "def f(a, b=1):\n    return g(a, key=b)\n"
	root := parse(t, syntax.Python, src)
	require.Equal(t, "module", root.Type)
	require.Nil(t, root.Parent)
	fn := root.FirstOfType("function_definition")
	require.NotNil(t, fn)
	require.Same(t, root, fn.Parent)
	require.Equal(t, 1, fn.Line())
	require.Equal(t, "f", fn.Child("name").Text([]byte(src)))
	require.Nil(t, fn.Child("no_such_field"))
	params := fn.Child("parameters")
	require.Equal(t, "(a, b=1)", params.Text([]byte(src)))
	require.Len(t, params.NamedChildren(), 2, "commas and parentheses are not named")
	body := fn.Child("body")
	require.Equal(t, 2, body.Line())
	ret := body.FirstOfType("return_statement")
	require.NotNil(t, ret)
	call := ret.NamedChildren()[0]
	require.Equal(t, "call", call.Type)
	require.Equal(t, "g", call.Child("function").Text([]byte(src)))
	args := call.Child("arguments")
	require.Len(t, args.NamedChildren(), 2)
	kw := args.FirstOfType("keyword_argument")
	require.Len(t, kw.ChildrenByField("name"), 1)
	require.Empty(t, kw.ChildrenByField("nothing"))
	require.Equal(t, "key=b", kw.Text([]byte(src)))
	require.Equal(t, 1, ret.EndRow, "end rows are 0-based")
}

func TestNilNodeHelpers(t *testing.T) {
	t.Parallel()
	var n *syntax.Node
	require.Nil(t, n.Child("x"))
	require.Nil(t, n.ChildrenByField("x"))
	require.Nil(t, n.NamedChildren())
	require.Nil(t, n.FirstOfType("x"))
	require.Empty(t, n.Text([]byte("abc")))
}

func TestParseEveryLanguage(t *testing.T) {
	t.Parallel()
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	cases := []struct {
		lang      *syntax.Lang
		src, root string
	}{
		{syntax.Python, "x = 1\n", "module"},
		{syntax.JavaScript, "let x = 1;", "program"},
		{syntax.TypeScript, "let x: number = 1;", "program"},
		{syntax.TSX, "const e = <div/>;", "program"},
		{syntax.Go, "package p\n", "source_file"},
		{syntax.Java, "class A {}", "program"},
		{syntax.PHP, "<?php echo 1;", "program"},
		{syntax.Ruby, "x = 1\n", "program"},
	}
	// One parser serves every language in turn, and again.
	for round := 0; round < 2; round++ {
		for _, tc := range cases {
			root, n, err := p.Parse(context.Background(), tc.lang, []byte(tc.src))
			require.NoError(t, err, tc.lang.Name)
			require.Equal(t, tc.root, root.Type, tc.lang.Name)
			require.Positive(t, n)
			require.NoError(t, p.ParseOnly(tc.lang, []byte(tc.src)))
		}
	}
}

func TestParseTransientMatchesParse(t *testing.T) {
	t.Parallel()
	src := []byte("class A { void f(int x) { if (x > 1) { g(x); } } }")
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	kept, n1, err := p.Parse(context.Background(), syntax.Java, src)
	require.NoError(t, err)
	shape := func(n *syntax.Node) []string {
		var out []string
		visit(n, func(n *syntax.Node) { out = append(out, n.Type+"/"+n.Field) })
		return out
	}
	want := shape(kept)
	tr, n2, err := p.ParseTransient(context.Background(), syntax.Java, src)
	require.NoError(t, err)
	require.Equal(t, n1, n2)
	require.Equal(t, want, shape(tr))
	// Another transient parse reuses the arrays; the tree from Parse is
	// untouched.
	_, _, err = p.ParseTransient(context.Background(), syntax.Java, []byte("class B {}"))
	require.NoError(t, err)
	require.Equal(t, want, shape(kept))
}

func TestParseCancelledContext(t *testing.T) {
	t.Parallel()
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := p.Parse(ctx, syntax.Python, []byte("x = 1\n"))
	require.ErrorIs(t, err, syntax.ErrTimeout)
	// The parser is still usable afterwards.
	root, _, err := p.Parse(context.Background(), syntax.Python, []byte("x = 1\n"))
	require.NoError(t, err)
	require.Equal(t, "module", root.Type)
}

func TestParseBrokenSourceStillGivesATree(t *testing.T) {
	t.Parallel()
	root := parse(t, syntax.Python, "def f(:\n    return )\n")
	var hasError bool
	visit(root, func(n *syntax.Node) { hasError = hasError || n.Type == "ERROR" })
	require.True(t, hasError, "syntax errors are ERROR nodes, not failures")
}
