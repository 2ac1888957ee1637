package python

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/ir"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/syntax"
)

func dumpTree(src []byte, n *syntax.Node, depth int) {
	txt := ""
	if len(n.Children) == 0 {
		txt = " " + strings.ReplaceAll(n.Text(src), "\n", "\\n")
	}
	fmt.Printf("%s%s%s named=%v%s\n", strings.Repeat("  ", depth), func() string {
		if n.Field != "" {
			return n.Field + ": "
		}
		return ""
	}(), n.Type, n.Named, txt)
	for _, c := range n.Children {
		dumpTree(src, c, depth+1)
	}
}

func TestZZTree(t *testing.T) {
	f := os.Getenv("PYSRC")
	if f == "" {
		t.Skip()
	}
	src, _ := os.ReadFile(f)
	p := syntax.NewParser(syntax.Limits{})
	root, _, err := p.Parse(context.Background(), syntax.Python, src)
	if err != nil {
		t.Fatal(err)
	}
	dumpTree(src, root, 0)
}

func TestZZDump(t *testing.T) {
	f := os.Getenv("PYIR")
	if f == "" {
		t.Skip()
	}
	src, _ := os.ReadFile(f)
	path := os.Getenv("PYPATH")
	if path == "" {
		path = "app/views.py"
	}
	file, err := Parse(context.Background(), path, src)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Print(ir.Dump(file))
	if err := ir.ValidateFile(file); err != nil {
		t.Fatal(err)
	}
}
