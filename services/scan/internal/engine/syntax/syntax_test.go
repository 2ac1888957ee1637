package syntax

import (
	"context"
	"errors"
	"strings"
	"testing"

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
