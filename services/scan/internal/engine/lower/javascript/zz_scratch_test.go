package javascript

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/ir"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/model"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/syntax"
)

func TestScratchTree(t *testing.T) {
	file := os.Getenv("JSDUMP")
	if file == "" {
		t.Skip()
	}
	src, _ := os.ReadFile(file)
	lang := syntax.LangFor(file)
	p := syntax.NewParser(syntax.Limits{})
	root, _, err := p.Parse(context.Background(), lang, src)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *syntax.Node, d int)
	walk = func(n *syntax.Node, d int) {
		txt := ""
		if len(n.Children) == 0 {
			txt = " " + strings.ReplaceAll(n.Text(src), "\n", " ")
		}
		f := ""
		if n.Field != "" {
			f = n.Field + ": "
		}
		fmt.Printf("%s%s%s%s\n", strings.Repeat("  ", d), f, n.Type, txt)
		for _, c := range n.Children {
			walk(c, d+1)
		}
	}
	walk(root, 0)
}

func TestScratchIR(t *testing.T) {
	file := os.Getenv("JSIR")
	if file == "" {
		t.Skip()
	}
	src, _ := os.ReadFile(file)
	lang := syntax.LangFor(file)
	p := syntax.NewParser(syntax.Limits{})
	root, _, err := p.Parse(context.Background(), lang, src)
	if err != nil {
		t.Fatal(err)
	}
	rel := os.Getenv("JSREL")
	if rel == "" {
		rel = "src/app.js"
	}
	f, err := Lower(rel, src, root)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Print(ir.Dump(f))
	if err := ir.ValidateFile(f); err != nil {
		t.Fatal(err)
	}
}

func TestScratchModels(t *testing.T) {
	s, err := model.Builtin("javascript")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(len(s.Sources), len(s.Sanitizers), len(s.EntryPoints))
}

func TestScratchRealJS(t *testing.T) {
	list := os.Getenv("JSLIST")
	if list == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(list)
	p := syntax.NewParser(syntax.Limits{})
	var lines, files int
	var lowerTime time.Duration
	for _, file := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		src, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		root, _, err := p.Parse(context.Background(), syntax.LangFor(file), src)
		if err != nil {
			continue
		}
		start := time.Now()
		f, err := Lower("src/x.js", src, root)
		lowerTime += time.Since(start)
		if d := time.Since(start); d > 100*time.Millisecond {
			fmt.Println("slow", file, d, len(src))
		}
		if err != nil {
			t.Fatal(file, err)
		}
		if err := ir.ValidateFile(f); err != nil {
			t.Fatal(file, err)
		}
		lines += f.Lines
		files++
	}
	fmt.Println(files, lines, lowerTime, float64(lines)/lowerTime.Seconds())
}
