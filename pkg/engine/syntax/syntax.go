// Package syntax parses source files with tree-sitter and copies the syntax
// tree into plain Go values, so that lowering and pattern matching run
// without per-node cgo calls and after the C tree is released.
//
// The copy keeps every named node and, in addition, the anonymous tokens that
// a grammar gives a field name (operators such as "+" or "==" under the field
// "operator"), because lowering needs them. Depth and node count are bounded
// so that hostile input cannot exhaust the stack or memory.
package syntax

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"sync"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/php"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/ruby"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// Errors returned for files that are skipped rather than analysed.
var (
	ErrTooDeep  = errors.New("syntax tree too deep")
	ErrTooLarge = errors.New("syntax tree too large")
	ErrTimeout  = errors.New("analysis time limit reached")
	ErrNoParse  = errors.New("file could not be parsed")
)

// Node is a copied syntax node.
type Node struct {
	Type     string // grammar node type ("method_invocation", or the token text for anonymous tokens: "+")
	Field    string // field name under the parent ("" when none)
	Named    bool
	Start    uint32 // byte offsets in the source
	End      uint32
	Row      int // 0-based start row
	EndRow   int
	Parent   *Node
	Children []*Node
}

// Child returns the first child with the given field name, or nil.
func (n *Node) Child(field string) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Field == field {
			return c
		}
	}
	return nil
}

// ChildrenByField returns every child with the given field name.
func (n *Node) ChildrenByField(field string) []*Node {
	if n == nil {
		return nil
	}
	var out []*Node
	for _, c := range n.Children {
		if c.Field == field {
			out = append(out, c)
		}
	}
	return out
}

// NamedChildren returns the named children (anonymous field tokens excluded).
func (n *Node) NamedChildren() []*Node {
	if n == nil {
		return nil
	}
	out := make([]*Node, 0, len(n.Children))
	for _, c := range n.Children {
		if c.Named {
			out = append(out, c)
		}
	}
	return out
}

// FirstOfType returns the first child of the given type, or nil.
func (n *Node) FirstOfType(typ string) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Type == typ {
			return c
		}
	}
	return nil
}

// Text returns the node's source text.
func (n *Node) Text(src []byte) string {
	if n == nil {
		return ""
	}
	return string(src[n.Start:n.End])
}

// Line returns the 1-based start line.
func (n *Node) Line() int { return n.Row + 1 }

// Lang describes one supported language.
type Lang struct {
	Name    string // "java", "python", "javascript", "typescript", "go", "php", "ruby"
	grammar func() *sitter.Language

	symOnce sync.Once
	syms    []symbol // by grammar symbol: name and whether it is named
	flags   []byte   // by grammar symbol: the walk's VS_NAMED and VS_PUNCT
	fields  []string // by field id; fields[0] is ""
}

type symbol struct {
	name  string
	named bool
	punct bool // an anonymous bracket, separator or quote: never a field worth keeping
}

// tables reads the grammar's symbol and field tables once: the tree copy then
// needs no call per node for a node's type, named-ness or field name.
func (l *Lang) tables() *Lang {
	l.symOnce.Do(func() {
		g := l.grammar()
		n := g.SymbolCount()
		l.syms = make([]symbol, n)
		l.flags = make([]byte, n)
		for i := uint32(0); i < n; i++ {
			s := sitter.Symbol(i)
			name := g.SymbolName(s)
			named := g.SymbolType(s) == sitter.SymbolTypeRegular
			l.syms[i] = symbol{name: name, named: named, punct: !named && name != "" && strings.Trim(name, "(){}[];,:'\"`") == ""}
			if named {
				l.flags[i] |= flagNamed
			}
			if l.syms[i].punct {
				l.flags[i] |= flagPunct
			}
		}
		// field ids run from 1 to the grammar's field count
		l.fields = []string{""}
		for id := 1; id <= math.MaxUint16; id++ {
			name := g.FieldName(id)
			if name == "" {
				break
			}
			l.fields = append(l.fields, name)
		}
	})
	return l
}

var (
	Java       = &Lang{Name: "java", grammar: java.GetLanguage}
	Python     = &Lang{Name: "python", grammar: python.GetLanguage}
	JavaScript = &Lang{Name: "javascript", grammar: javascript.GetLanguage}
	TypeScript = &Lang{Name: "typescript", grammar: typescript.GetLanguage}
	TSX        = &Lang{Name: "typescript", grammar: tsx.GetLanguage}
	Go         = &Lang{Name: "go", grammar: golang.GetLanguage}
	PHP        = &Lang{Name: "php", grammar: php.GetLanguage}
	Ruby       = &Lang{Name: "ruby", grammar: ruby.GetLanguage}
)

// LangFor returns the language of a file by its name, or nil.
func LangFor(file string) *Lang {
	switch strings.ToLower(path.Ext(file)) {
	case ".py":
		return Python
	case ".js", ".jsx", ".mjs", ".cjs":
		return JavaScript
	case ".ts", ".mts", ".cts":
		return TypeScript
	case ".tsx":
		return TSX
	case ".go":
		return Go
	case ".java":
		return Java
	case ".php", ".phtml":
		return PHP
	case ".rb":
		return Ruby
	}
	return nil
}

// Limits bound the work spent parsing one file.
type Limits struct {
	MaxDepth int
	MaxNodes int
	Timeout  time.Duration
}

// Parser parses files; it keeps one tree-sitter parser per language and is
// not safe for concurrent use.
type Parser struct {
	parsers map[*Lang]*sitter.Parser
	limits  Limits
	buf     copyBuf
}

// NewParser returns a parser with the given limits.
func NewParser(l Limits) *Parser {
	return &Parser{parsers: map[*Lang]*sitter.Parser{}, limits: l}
}

// Close releases the tree-sitter parsers.
func (p *Parser) Close() {
	for _, tp := range p.parsers {
		tp.Close()
	}
	p.parsers = map[*Lang]*sitter.Parser{}
}

func (p *Parser) parser(l *Lang) *sitter.Parser {
	tp := p.parsers[l]
	if tp == nil {
		tp = sitter.NewParser()
		tp.SetLanguage(l.grammar())
		p.parsers[l] = tp
	}
	return tp
}

// ParseOnly runs the bare tree-sitter parse without copying the tree: the
// floor that benchmarks compare the analysis with.
func (p *Parser) ParseOnly(l *Lang, src []byte) error {
	tree, err := p.parser(l).ParseCtx(context.Background(), nil, src)
	if err != nil {
		return err
	}
	tree.Close()
	return nil
}

// Parse parses src and returns the copied tree and its node count.
func (p *Parser) Parse(ctx context.Context, l *Lang, src []byte) (*Node, int, error) {
	p.buf.reuse = false
	return p.parse(ctx, l, src)
}

// ParseTransient is Parse for a caller that is done with the tree before it
// parses again: the tree's nodes live in arrays the next ParseTransient on
// this Parser overwrites, sparing the collector a tree per file. The
// analysis of a file uses it, as nothing it keeps (findings, the lowered
// code) points into the tree.
func (p *Parser) ParseTransient(ctx context.Context, l *Lang, src []byte) (*Node, int, error) {
	p.buf.reuse = true
	return p.parse(ctx, l, src)
}

func (p *Parser) parse(ctx context.Context, l *Lang, src []byte) (*Node, int, error) {
	tp := p.parser(l)
	limit := p.limits.Timeout
	if limit <= 0 {
		limit = 5 * time.Second
	}
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(dl))
	}
	if limit <= 0 || ctx.Err() != nil {
		return nil, 0, ErrTimeout
	}
	tp.SetOperationLimit(int(limit / time.Microsecond))
	// The binding's cancellation flag can be raised after a parse has
	// finished and then abort the next parse on the same parser, so time is
	// bounded by the operation limit instead of the context.
	tree, err := tp.ParseCtx(context.Background(), nil, src)
	if err != nil {
		tp.Reset()
		if errors.Is(err, sitter.ErrOperationLimit) || ctx.Err() != nil {
			return nil, 0, ErrTimeout
		}
		return nil, 0, fmt.Errorf("%w: %v", ErrNoParse, err)
	}
	defer tree.Close()
	maxDepth, maxNodes := p.limits.MaxDepth, p.limits.MaxNodes
	if maxDepth <= 0 {
		maxDepth = 400
	}
	if maxNodes <= 0 {
		maxNodes = 1_500_000
	}
	root, n, err := p.buf.copyTree(ctx, tree, l.tables(), maxDepth, maxNodes)
	if err != nil && ctx.Err() != nil {
		return nil, n, ErrTimeout
	}
	return root, n, err
}
