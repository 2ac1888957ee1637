package javascript

import (
	"fmt"
	"path"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Lower turns the syntax tree of one JavaScript or TypeScript file (any of
// the javascript, typescript and tsx grammars) into an ir.File.
func Lower(filePath string, src []byte, root *syntax.Node) (*ir.File, error) {
	if root == nil {
		return nil, fmt.Errorf("lower %s: no syntax tree", filePath)
	}
	lang := "javascript"
	switch strings.ToLower(path.Ext(filePath)) {
	case ".ts", ".tsx", ".mts", ".cts":
		lang = "typescript"
	}
	l := &lowerer{
		src:     src,
		file:    &ir.File{Path: filePath, Lang: lang, Package: modulePath(filePath), Src: src, Lines: lower.Lines(src)},
		top:     map[string]*topDecl{},
		imports: map[string]*importRef{},
		qnames:  map[string]int{},

		protoClasses: map[string]*classInfo{},
	}
	l.mod = l.file.Package
	l.collectTop(root)
	l.lowerModule(root)
	return l.file, nil
}

// lowerer holds the state of lowering one file.
type lowerer struct {
	src  []byte
	file *ir.File
	mod  string // module path: the file's Package

	top      map[string]*topDecl   // names declared at module level
	imports  map[string]*importRef // module-level import bindings by local name
	qnames   map[string]int        // function qualified names handed out, for uniqueness
	lambdas  int
	init     *fnCtx
	exported []exportedFunc // functions the module exports, annotated at the end
	topNodes []*syntax.Node // module-level function declarations

	protoClasses map[string]*classInfo // module-level constructor functions with prototype methods
}

// topDecl is a name declared at module level.
type topDecl struct {
	kind    topKind
	qname   string // functions and classes: their qualified name
	typ     string // variables: evident type of their initializer or annotation
	fnQName string // variables initialized with a function expression: the function's qualified name
}

type topKind uint8

const (
	topVar topKind = iota + 1
	topFunc
	topClass
)

// importRef is what an import binding refers to.
type importRef struct {
	qual   string // qualified name: the module ("child_process", "src/db") or a member ("child_process.exec")
	module bool   // the binding is the module value itself (default import, namespace import, require)
	rel    bool   // the module is a file of the repository
	owner  string // for members: the qualified name the member belongs to
	member string // for members: the member name
}

// pos returns the IR position of a node.
func pos(n *syntax.Node) ir.Pos {
	return lower.Pos(n)
}

func (l *lowerer) text(n *syntax.Node) string { return n.Text(l.src) }

// uniqueQName returns q, or q with a numeric suffix when q was handed out
// before in this file.
func (l *lowerer) uniqueQName(q string) string {
	n := l.qnames[q]
	l.qnames[q] = n + 1
	if n == 0 {
		return q
	}
	return fmt.Sprintf("%s%d", q, n+1)
}

// lambdaName names an anonymous function nested in parent.
func (l *lowerer) lambdaName(parent string) string {
	l.lambdas++
	return fmt.Sprintf("%s$lambda%d", parent, l.lambdas)
}

// unwrap skips parentheses and TypeScript-only wrappers that do not change
// the value (non-null assertions, satisfies).
func unwrap(n *syntax.Node) *syntax.Node {
	for n != nil {
		switch n.Type {
		case "parenthesized_expression", "non_null_expression", "satisfies_expression":
			c := firstNamed(n)
			if c == nil {
				return n
			}
			n = c
		default:
			return n
		}
	}
	return n
}

func firstNamed(n *syntax.Node) *syntax.Node {
	for _, c := range n.Children {
		if c.Named && !isComment(c) {
			return c
		}
	}
	return nil
}

func isComment(n *syntax.Node) bool { return n.Type == "comment" || n.Type == "html_comment" }

// hasKeyword reports whether the anonymous keyword kw appears in the source
// of n before its child stop (tokens such as static, async, get, set and
// default are not kept in the syntax tree).
func (l *lowerer) hasKeyword(n, stop *syntax.Node, kw string) bool {
	end := n.End
	if stop != nil {
		end = stop.Start
	}
	// skip decorators and the like: only the text after the last named child before stop counts
	start := n.Start
	for _, c := range n.Children {
		if c == stop {
			break
		}
		if c.Named && c.Type == "decorator" {
			start = c.End
		}
	}
	for _, w := range strings.FieldsFunc(string(l.src[start:end]), func(r rune) bool {
		return !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if w == kw {
			return true
		}
	}
	return false
}
