package syntax

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/stretchr/testify/require"
)

func find(n *Node, typ string) *Node {
	if n.Type == typ {
		return n
	}
	for _, c := range n.Children {
		if f := find(c, typ); f != nil {
			return f
		}
	}
	return nil
}

func TestParseKeepsOperatorsAndDropsPunctuation(t *testing.T) {
	p := NewParser(Limits{})
	defer p.Close()
	cases := []struct {
		lang     *Lang
		src, bin string
		op       string
	}{
		{Java, "class A { int f() { return 1 + 2; } }", "binary_expression", "+"},
		{Python, "x = a == b\n", "comparison_operator", "=="},
		{JavaScript, "let x = a && b;", "binary_expression", "&&"},
		{Go, "package p\nvar x = a << 2\n", "binary_expression", "<<"},
	}
	for _, c := range cases {
		t.Run(c.lang.Name, func(t *testing.T) {
			root, n, err := p.Parse(context.Background(), c.lang, []byte(c.src))
			require.NoError(t, err)
			require.Positive(t, n)
			b := find(root, c.bin)
			require.NotNil(t, b, c.bin)
			var ops []string
			for _, ch := range b.Children {
				if !ch.Named {
					ops = append(ops, ch.Type)
				}
			}
			require.Contains(t, ops, c.op)
			require.Nil(t, find(root, ";"), "punctuation is not copied")
			require.Nil(t, find(root, "("))
		})
	}
}

func TestParseLimits(t *testing.T) {
	deep := strings.Repeat("(", 3000) + "1" + strings.Repeat(")", 3000)
	p := NewParser(Limits{MaxDepth: 100})
	defer p.Close()
	_, _, err := p.Parse(context.Background(), Python, []byte("x = "+deep+"\n"))
	require.True(t, errors.Is(err, ErrTooDeep), "%v", err)
	p2 := NewParser(Limits{MaxNodes: 50})
	defer p2.Close()
	_, _, err = p2.Parse(context.Background(), Python, []byte(strings.Repeat("x = 1\n", 100)))
	require.True(t, errors.Is(err, ErrTooLarge), "%v", err)
}

// refCopy is the copy made through the binding's node API, one call per
// property: the reference the C walk must reproduce.
func refCopy(t *testing.T, root *sitter.Node, src []byte, l *Lang) *Node {
	t.Helper()
	syms := l.tables().syms
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	rowOf := func(off uint32) int { return sort.SearchInts(starts, int(off)+1) - 1 }
	endRowOf := func(s, e uint32) int {
		if e > s {
			e--
		}
		return rowOf(e)
	}
	cur := sitter.NewTreeCursor(root)
	defer cur.Close()
	top := &Node{Type: root.Type(), Named: true, Start: root.StartByte(), End: root.EndByte()}
	top.Row, top.EndRow = rowOf(top.Start), endRowOf(top.Start, top.End)
	var walk func(parent *Node)
	walk = func(parent *Node) {
		if !cur.GoToFirstChild() {
			return
		}
		for {
			n := cur.CurrentNode()
			typ, named, punct := n.Type(), n.IsNamed(), false
			if sym := int(n.Symbol()); sym < len(syms) {
				named, punct = syms[sym].named, syms[sym].punct
			}
			field := ""
			if !punct {
				field = cur.CurrentFieldName()
			}
			next := parent
			if named || field != "" {
				sb, eb := n.StartByte(), n.EndByte()
				next = &Node{Type: typ, Field: field, Named: named, Start: sb, End: eb, Row: rowOf(sb), EndRow: endRowOf(sb, eb), Parent: parent}
				parent.Children = append(parent.Children, next)
			}
			walk(next)
			if !cur.GoToNextSibling() {
				break
			}
		}
		cur.GoToParent()
	}
	walk(top)
	return top
}

func sameTree(t *testing.T, want, got *Node, where string) {
	t.Helper()
	require.Equal(t, [6]any{want.Type, want.Field, want.Named, want.Start, want.End, want.Row},
		[6]any{got.Type, got.Field, got.Named, got.Start, got.End, got.Row}, where)
	require.Equal(t, want.EndRow, got.EndRow, "%s: %s end row", where, want.Type)
	require.Len(t, got.Children, len(want.Children), "%s: children of %s at %d", where, want.Type, want.Start)
	for i := range want.Children {
		require.Same(t, got, got.Children[i].Parent)
		require.Equal(t, len(got.Children[i].Children), cap(got.Children[i].Children), "child lists are capped")
		sameTree(t, want.Children[i], got.Children[i], where)
	}
}

// TestCopyMatchesBinding checks the C walk against the binding's node API on
// the labelled corpus in every language, on files with syntax errors, on
// files without a final newline and across record buffer refills.
type input struct {
	name string
	lang *Lang
	src  []byte
}

func TestCopyMatchesBinding(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../testdata/corpus", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && LangFor(p) != nil {
			files = append(files, p)
		}
		return err
	})
	require.NoError(t, err)
	require.Greater(t, len(files), 300)
	var inputs []input
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		inputs = append(inputs, input{f, LangFor(f), src})
	}
	inputs = append(inputs,
		input{"broken java", Java, []byte("class A { void f() { int x = ; if (x > { } }\n\n")},
		input{"broken python", Python, []byte("def f(:\n  return (1 +\n")},
		input{"no final newline", Ruby, []byte("def f\n  x = 1\nend")},
		input{"empty", Go, nil},
		input{"long", JavaScript, []byte(strings.Repeat("let a = b + c * d(e, f[g]);\n", 3000))},
	)
	p := NewParser(Limits{})
	defer p.Close()
	// ParseTransient overwrites the previous tree's arrays: files of
	// every size one after the other must still come out whole, with
	// nothing left over from the file before
	for _, transient := range []bool{false, true} {
		checkCopies(t, p, inputs, transient)
	}
}

func checkCopies(t *testing.T, p *Parser, inputs []input, transient bool) {
	for _, in := range inputs {
		parse := p.Parse
		if transient {
			parse = p.ParseTransient
			in.name += " (transient)"
		}
		got, n, err := parse(context.Background(), in.lang, in.src)
		require.NoError(t, err, in.name)
		tree, err := p.parser(in.lang).ParseCtx(context.Background(), nil, in.src)
		require.NoError(t, err)
		want := refCopy(t, tree.RootNode(), in.src, in.lang)
		tree.Close()
		sameTree(t, want, got, in.name)
		count := 0
		var walk func(*Node)
		walk = func(n *Node) {
			count++
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(got)
		require.Equal(t, count, n, in.name)
	}
}
